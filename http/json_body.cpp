#include "http/json_body.h"

namespace exspec::http {
using nlohmann::ordered_json;

void only_fields(const ordered_json& obj, const std::string& at, std::initializer_list<const char*> known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok) throw bad_param(at + "." + it.key(), at + "." + it.key() + " is not supported", "unknown_parameter");
  }
}

const ordered_json& need_field(const ordered_json& obj, const char* key, const std::string& at,
                               bool (ordered_json::*is)() const noexcept, const char* what) {
  const ordered_json* v = field(obj, key);
  const std::string p = at + "." + key;
  if (!v) throw bad_param(p, p + " is required", "missing_required_parameter");
  if (!(v->*is)()) throw bad_param(p, p + " must be " + what, "invalid_type");
  return *v;
}

ordered_json parse_json_body(const std::string& body) {
  try {
    return parse_json_text(body);
  } catch (const JsonBodyError& e) {
    throw ApiError(400, std::string("the request body is not valid JSON: ") + e.what(), e.path, "invalid_json");
  }
}

ApiError json_value_error(const std::exception& e) {
  return ApiError(400, std::string("a value in the request body has the wrong type or range: ") + e.what(), "",
                  "invalid_value");
}

}  // namespace exspec::http
