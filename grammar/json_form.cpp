#include "grammar/json_form.h"

#include <cmath>
#include <cstdio>

namespace exspec::grammar {

std::string compact_json(const nlohmann::ordered_json& v) {
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e15) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f", x);
      return std::string(buf) == "-0" ? "0" : buf;
    }
    return v.dump();
  }
  if (v.is_object()) {
    std::string s = "{";
    for (const auto& [k, x] : v.items()) s += (s.size() > 1 ? "," : "") + nlohmann::ordered_json(k).dump() + ":" + compact_json(x);
    return s + "}";
  }
  if (v.is_array()) {
    std::string s = "[";
    for (const nlohmann::ordered_json& x : v) s += (s.size() > 1 ? "," : "") + compact_json(x);
    return s + "]";
  }
  return v.dump();
}

}  // namespace exspec::grammar
