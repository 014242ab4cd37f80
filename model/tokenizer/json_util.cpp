#include "model/tokenizer/json_util.h"

#include <stdexcept>

namespace exspec::tok {

std::string json_type(const nlohmann::json& j, const char* what) {
  if (!j.is_object())
    throw std::runtime_error(std::string("tokenizer: ") + what + " must be an object or null");
  auto it = j.find("type");
  if (it == j.end() || !it->is_string())
    throw std::runtime_error(std::string("tokenizer: ") + what + " has no string field 'type'");
  return it->get<std::string>();
}

std::string json_string(const nlohmann::json& j, const char* key, const char* what) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string())
    throw std::runtime_error(std::string("tokenizer: ") + what + ": field '" + key +
                             "' must be a string");
  return it->get<std::string>();
}

const nlohmann::json& json_array(const nlohmann::json& j, const char* key, const char* what) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array())
    throw std::runtime_error(std::string("tokenizer: ") + what + ": field '" + key +
                             "' must be an array");
  return *it;
}

Pattern json_pattern(const nlohmann::json& j, const char* what) {
  auto it = j.find("pattern");
  if (it == j.end() || !it->is_object())
    throw std::runtime_error(std::string("tokenizer: ") + what +
                             ": field 'pattern' must be {\"String\": ...} or {\"Regex\": ...}");
  Pattern p;
  if (it->contains("String") && (*it)["String"].is_string()) {
    p.literal = (*it)["String"].get<std::string>();
  } else if (it->contains("Regex") && (*it)["Regex"].is_string()) {
    p.regex = std::make_shared<Regex>((*it)["Regex"].get<std::string>());
  } else {
    throw std::runtime_error(std::string("tokenizer: ") + what +
                             ": field 'pattern' must be {\"String\": ...} or {\"Regex\": ...}");
  }
  return p;
}

SplitBehavior json_behavior(const nlohmann::json& j, const char* what) {
  const std::string b = j.value("behavior", std::string("Isolated"));
  if (b == "Removed") return SplitBehavior::kRemoved;
  if (b == "Isolated") return SplitBehavior::kIsolated;
  if (b == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (b == "Contiguous") return SplitBehavior::kContiguous;
  throw std::runtime_error(std::string("tokenizer: ") + what + ": unknown behavior '" + b + "'");
}

}  // namespace exspec::tok
