// config.json's field readers, shared by the config's parts (model_config.cpp, rope_scaling.cpp):
// each names the file and the field in its error.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace exspec {

namespace config_json {
[[noreturn]] void fail(const std::string& where, const std::string& what);
int64_t need_int(const nlohmann::json& j, const char* key, const std::string& where);  // present, > 0
double get_double(const nlohmann::json& j, const char* key, double dflt, const std::string& where);
bool get_bool(const nlohmann::json& j, const char* key, bool dflt, const std::string& where);
}  // namespace config_json

}  // namespace exspec
