// Small checked accessors for tokenizer.json fields: every failure names the component/field.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/tokenizer/regex_split.h"

namespace exspec::tok {

// The "type" field of a component object (what = "normalizer", "decoder", ...).
std::string json_type(const nlohmann::json& j, const char* what);
std::string json_string(const nlohmann::json& j, const char* key, const char* what);
const nlohmann::json& json_array(const nlohmann::json& j, const char* key, const char* what);
// {"pattern": {"String": s}} or {"pattern": {"Regex": r}}.
Pattern json_pattern(const nlohmann::json& j, const char* what);
SplitBehavior json_behavior(const nlohmann::json& j, const char* what);

}  // namespace exspec::tok
