#include "tests/grammar/canonical.h"

#include <vector>

#include "grammar/json_schema.h"

namespace exspec::grammar::test {
namespace {

using Json = nlohmann::ordered_json;

const Json& resolve(const Json& root, const Json& s, int depth = 0) {
  if (depth < 16 && s.is_object() && s.contains("$ref") && s["$ref"].is_string()) {
    const std::string r = s["$ref"].get<std::string>();
    if (!r.empty() && r[0] == '#') {
      try {
        return resolve(root, root.at(Json::json_pointer(r.substr(1))), depth + 1);
      } catch (const std::exception&) {
      }
    }
  }
  return s;
}

// An object branch that could be the one an object instance took: it lists every key, the instance
// has its required ones, and its constants agree.
bool fits(const Json& root, const Json& b0, const Json& v) {
  const Json& b = resolve(root, b0);
  if (!v.is_object() || !b.is_object() || !b.contains("properties")) return false;
  for (const auto& [k, x] : v.items()) {
    if (!b["properties"].contains(k)) return false;
    const Json& p = resolve(root, b["properties"][k]);
    if (p.is_object() && p.contains("const") && p["const"] != x) return false;
  }
  if (b.contains("required"))
    for (const Json& r : b["required"])
      if (!v.contains(r.get<std::string>())) return false;
  return true;
}

// The schema and its allOf/anyOf/oneOf branches, depth first; of an anyOf/oneOf, the first
// branch the instance fits when one does.
void branches(const Json& root, const Json& s0, const Json& v, std::vector<const Json*>& out, int depth = 0) {
  const Json& s = resolve(root, s0);
  if (!s.is_object() || depth > 16) return;
  out.push_back(&s);
  if (s.contains("allOf") && s["allOf"].is_array())
    for (const Json& b : s["allOf"]) branches(root, b, v, out, depth + 1);
  for (const char* k : {"anyOf", "oneOf"}) {
    if (!s.contains(k) || !s[k].is_array()) continue;
    const Json* fit = nullptr;
    for (const Json& b : s[k])
      if (!fit && fits(root, b, v)) fit = &b;
    if (fit) branches(root, *fit, v, out, depth + 1);
    else for (const Json& b : s[k]) branches(root, b, v, out, depth + 1);
  }
}

std::string text(const Json& root, const Json& schema, const Json& v) {
  static const Json any = true;
  std::vector<const Json*> all;
  branches(root, schema, v, all);
  if (v.is_object()) {
    std::vector<std::string> order;
    auto listed = [&](const std::string& k) { return std::find(order.begin(), order.end(), k) != order.end(); };
    for (const Json* s : all)
      if (s->contains("properties") && (*s)["properties"].is_object())
        for (const auto& [k, x] : (*s)["properties"].items())
          if (v.contains(k) && !listed(k)) order.push_back(k);
    for (const auto& [k, x] : v.items())
      if (!listed(k)) order.push_back(k);
    std::string out = "{";
    for (const std::string& k : order) {
      const Json* sub = &any;
      for (const Json* s : all) {
        if (s->contains("properties") && (*s)["properties"].contains(k)) sub = &(*s)["properties"][k];
        else if (sub == &any && s->contains("additionalProperties")) sub = &(*s)["additionalProperties"];
        if (sub != &any) break;
      }
      out += (out.size() > 1 ? "," : "") + Json(k).dump() + ":" + text(root, *sub, v[k]);
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      const Json* sub = &any;
      for (const Json* s : all) {
        if (s->contains("prefixItems") && i < (*s)["prefixItems"].size()) sub = &(*s)["prefixItems"][i];
        else if (s->contains("items") && (*s)["items"].is_array() && i < (*s)["items"].size()) sub = &(*s)["items"][i];
        else if (s->contains("items") && !(*s)["items"].is_array()) sub = &(*s)["items"];
        if (sub != &any) break;
      }
      out += (i ? "," : "") + text(root, *sub, v[i]);
    }
    return out + "]";
  }
  return compact_json(v);
}

}  // namespace

std::string canonical_text(const Json& root, const Json& instance) { return text(root, root, instance); }

}  // namespace exspec::grammar::test
