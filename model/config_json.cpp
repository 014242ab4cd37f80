#include "model/config_json.h"

#include <stdexcept>

namespace exspec::config_json {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

int64_t need_int(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) fail(where, std::string("missing field \"") + key + "\"");
  if (!it->is_number_integer()) fail(where, std::string("field \"") + key + "\" must be an integer");
  int64_t v = it->get<int64_t>();
  if (v <= 0) fail(where, std::string("field \"") + key + "\" must be positive, got " + std::to_string(v));
  return v;
}

double get_double(const json& j, const char* key, double dflt, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return dflt;
  if (!it->is_number()) fail(where, std::string("field \"") + key + "\" must be a number");
  return it->get<double>();
}

bool get_bool(const json& j, const char* key, bool dflt, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return dflt;
  if (!it->is_boolean()) fail(where, std::string("field \"") + key + "\" must be a boolean");
  return it->get<bool>();
}

}  // namespace exspec::config_json
