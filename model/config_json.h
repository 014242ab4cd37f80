// config.json's field readers, shared by the config's parts (model_config.cpp, rope_scaling.cpp):
// each names the file and the field in its error.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "model/model_config.h"

namespace exspec {

namespace config_json {
[[noreturn]] void fail(const std::string& where, const std::string& what);
int64_t need_int(const nlohmann::json& j, const char* key, const std::string& where);  // present, > 0
double get_double(const nlohmann::json& j, const char* key, double dflt, const std::string& where);
bool get_bool(const nlohmann::json& j, const char* key, bool dflt, const std::string& where);
}  // namespace config_json

// rope_scaling of config.json `j` (default, linear, llama3, longrope); `where` names the file.
RopeScaling parse_rope_scaling(const nlohmann::json& j, const ArchitectureRow& row, const std::string& where);
// c's rope_scaling written into config.json `j`, as parse_rope_scaling reads it back.
void rope_scaling_json(const ModelConfig& c, nlohmann::json& j);

}  // namespace exspec
