#include "model/tokenizer/post_processor.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/tokenizer/json_util.h"

namespace exspec::tok {
namespace {

using Lookup = std::function<std::optional<int64_t>(const std::string&)>;

std::vector<int64_t> template_ids(const nlohmann::json& j, const std::string& name, const Lookup& lookup) {
  auto st = j.find("special_tokens");
  if (st != j.end() && st->is_object() && st->contains(name)) {
    const auto& e = (*st)[name];
    if (e.contains("ids") && e["ids"].is_array()) {
      std::vector<int64_t> ids;
      for (const auto& x : e["ids"]) ids.push_back(x.get<int64_t>());
      return ids;
    }
  }
  if (auto id = lookup(name)) return {*id};
  throw std::runtime_error("tokenizer: post_processor TemplateProcessing: unknown special token '" + name + "'");
}

int64_t pair_id(const nlohmann::json& j, const char* key, const char* what) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[1].is_number_integer())
    throw std::runtime_error(std::string("tokenizer: post_processor ") + what + ": field '" + key +
                             "' must be [token, id]");
  return (*it)[1].get<int64_t>();
}

}  // namespace

SpecialAffixes post_processor_from_json(const nlohmann::json& j, const Lookup& lookup) {
  SpecialAffixes r;
  if (j.is_null()) return r;
  const std::string type = json_type(j, "post_processor");
  if (type == "ByteLevel") return r;
  if (type == "TemplateProcessing") {
    bool after = false;
    for (const auto& item : json_array(j, "single", "post_processor TemplateProcessing")) {
      if (item.contains("Sequence")) {
        after = true;
      } else if (item.contains("SpecialToken")) {
        const std::string name = item["SpecialToken"].value("id", std::string());
        for (int64_t id : template_ids(j, name, lookup)) (after ? r.suffix : r.prefix).push_back(id);
      } else {
        throw std::runtime_error("tokenizer: post_processor TemplateProcessing: bad item in 'single'");
      }
    }
    return r;
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    r.prefix.push_back(pair_id(j, "cls", type.c_str()));
    r.suffix.push_back(pair_id(j, "sep", type.c_str()));
    return r;
  }
  if (type == "Sequence") {
    for (const auto& sub : json_array(j, "processors", "post_processor Sequence")) {
      SpecialAffixes s = post_processor_from_json(sub, lookup);
      r.prefix.insert(r.prefix.begin(), s.prefix.begin(), s.prefix.end());
      r.suffix.insert(r.suffix.end(), s.suffix.begin(), s.suffix.end());
    }
    return r;
  }
  throw std::runtime_error("tokenizer: unsupported post_processor type '" + type +
                           "' (supported: TemplateProcessing, BertProcessing, RobertaProcessing, "
                           "ByteLevel, Sequence)");
}

}  // namespace exspec::tok
