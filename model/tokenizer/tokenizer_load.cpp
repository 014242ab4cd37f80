// Loading: tokenizer.json components, tokenizer_config.json, generation_config.json.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "model/gguf/gguf_file.h"
#include "model/io_util.h"
#include "model/tokenizer/json_util.h"
#include "model/tokenizer/post_processor.h"
#include "model/tokenizer/tokenizer_impl.h"

namespace exspec::tok {
namespace fs = std::filesystem;
namespace {

nlohmann::json read_json(const fs::path& p) {
  try {
    return nlohmann::json::parse(read_text_file(p.string()));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("tokenizer: " + p.string() + " is not valid JSON: " + e.what());
  }
}

// "bos_token": "<s>" | {"content": "<s>", ...} | null
std::optional<std::string> config_token(const nlohmann::json& cfg, const char* key) {
  auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    return (*it)["content"].get<std::string>();
  throw std::runtime_error(std::string("tokenizer_config.json: field '") + key +
                           "' must be a string, {\"content\": ...} or null");
}

void read_added_tokens(const nlohmann::json& j, AddedTokens& added) {
  auto it = j.find("added_tokens");
  if (it == j.end() || it->is_null()) return;
  if (!it->is_array()) throw std::runtime_error("tokenizer: field 'added_tokens' must be an array");
  for (const auto& e : *it) {
    if (!e.is_object() || !e.contains("id") || !e["id"].is_number_integer() || !e.contains("content") ||
        !e["content"].is_string())
      throw std::runtime_error("tokenizer: every added_tokens entry needs an integer 'id' and a string 'content'");
    AddedToken t;
    t.id = e["id"].get<int64_t>();
    t.content = e["content"].get<std::string>();
    t.special = e.value("special", false);
    t.lstrip = e.value("lstrip", false);
    t.rstrip = e.value("rstrip", false);
    t.single_word = e.value("single_word", false);
    t.normalized = e.value("normalized", !t.special);
    added.add(std::move(t));
  }
}

void read_config(const nlohmann::json& cfg, const nlohmann::json& tok_json, TokenizerImpl& t) {
  auto id_of = [&](const std::optional<std::string>& name, const char* key) -> std::optional<int64_t> {
    if (!name) return std::nullopt;
    auto id = t.token_to_id(*name);
    if (!id)
      throw std::runtime_error(std::string("tokenizer_config.json: ") + key + " '" + *name +
                               "' is not a token of tokenizer.json");
    return id;
  };
  t.bos = id_of(config_token(cfg, "bos_token"), "bos_token");
  if (auto eos = id_of(config_token(cfg, "eos_token"), "eos_token")) t.eos.push_back(*eos);

  auto lookup = [&](const std::string& s) { return t.token_to_id(s); };
  SpecialAffixes aff = post_processor_from_json(
      tok_json.contains("post_processor") ? tok_json["post_processor"] : nlohmann::json(), lookup);
  const bool has_flags = (cfg.contains("add_bos_token") && cfg["add_bos_token"].is_boolean()) ||
                         (cfg.contains("add_eos_token") && cfg["add_eos_token"].is_boolean());
  if (has_flags) {  // as transformers' Llama-style tokenizers: the flags rebuild the template
    aff = SpecialAffixes{};
    if (cfg.value("add_bos_token", false) && t.bos) aff.prefix.push_back(*t.bos);
    if (cfg.value("add_eos_token", false) && !t.eos.empty()) aff.suffix.push_back(t.eos[0]);
  }
  t.prefix = std::move(aff.prefix);
  t.suffix = std::move(aff.suffix);

  if (auto ct = cfg.find("chat_template"); ct != cfg.end()) {
    if (ct->is_string()) {
      t.chat_template = ct->get<std::string>();
    } else if (ct->is_array()) {  // [{"name": "default", "template": ...}, ...]
      for (const auto& e : *ct) {
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("template") ||
            !e["template"].is_string())
          throw std::runtime_error("tokenizer_config.json: every chat_template entry needs a string 'name' and 'template'");
        t.chat_templates.emplace_back(e["name"].get<std::string>(), e["template"].get<std::string>());
        if (e["name"] == "default") t.chat_template = e["template"].get<std::string>();
      }
    }
  }
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"})
    if (auto tok = config_token(cfg, key)) t.special_tokens_map.emplace_back(key, *tok);
  if (auto ml = cfg.find("model_max_length"); ml != cfg.end() && ml->is_number()) {
    const double v = ml->get<double>();
    if (v > 0 && v < 1e15) t.model_max_length = int64_t(v);
  }
}

}  // namespace

std::shared_ptr<TokenizerImpl> build_tokenizer(const nlohmann::json& j, const nlohmann::json& cfg) {
  auto t = std::make_shared<TokenizerImpl>();
  auto get = [&](const char* key) { return j.contains(key) ? j[key] : nlohmann::json(); };
  t->pre_tokenizer = PreTokenizer::from_json(get("pre_tokenizer"));
  const bool byte_level = t->pre_tokenizer && t->pre_tokenizer->byte_level();
  t->model = BpeModel::from_json(j["model"], byte_level);
  t->normalizer = Normalizer::from_json(get("normalizer"));
  t->decoder = DecoderPipeline::from_json(get("decoder"), byte_level);
  read_added_tokens(j, t->added);
  t->vocab_size = std::max(t->model->size(), t->added.max_id() + 1);
  read_config(cfg, j, *t);
  return t;
}

std::shared_ptr<const TokenizerImpl> load_tokenizer(const std::string& path_or_dir) {
  if (gguf::is_gguf_path(path_or_dir)) return load_tokenizer_gguf(path_or_dir);
  fs::path file(path_or_dir);
  if (fs::is_directory(file)) file /= "tokenizer.json";
  if (!fs::exists(file)) throw std::runtime_error("tokenizer: " + file.string() + " does not exist");
  const fs::path dir = file.parent_path();
  const nlohmann::json j = read_json(file);
  if (!j.is_object() || !j.contains("model"))
    throw std::runtime_error("tokenizer: " + file.string() + " has no 'model' (is it a tokenizer.json?)");

  std::shared_ptr<TokenizerImpl> t;
  try {
    nlohmann::json cfg = nlohmann::json::object();
    if (fs::exists(dir / "tokenizer_config.json")) cfg = read_json(dir / "tokenizer_config.json");
    t = build_tokenizer(j, cfg);
    if (t->chat_template.empty() && fs::exists(dir / "chat_template.jinja"))
      t->chat_template = read_text_file((dir / "chat_template.jinja").string());
    if (fs::exists(dir / "generation_config.json")) {
      const nlohmann::json g = read_json(dir / "generation_config.json");
      std::vector<int64_t> ids;
      if (g.contains("eos_token_id") && g["eos_token_id"].is_number_integer()) ids.push_back(g["eos_token_id"].get<int64_t>());
      if (g.contains("eos_token_id") && g["eos_token_id"].is_array())
        for (const auto& x : g["eos_token_id"]) ids.push_back(x.get<int64_t>());
      for (int64_t id : ids)
        if (std::find(t->eos.begin(), t->eos.end(), id) == t->eos.end()) t->eos.push_back(id);
    }
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + " [in " + file.string() + "]");
  }
  return t;
}

}  // namespace exspec::tok
