// allOf as one merged schema, and the check that a oneOf's branches cannot both match (then it
// is an anyOf). What cannot be merged or shown disjoint is refused, never approximated.
#include <algorithm>

#include "grammar/json_compiler.h"

namespace exspec::grammar::json_detail {
namespace {

bool is_true(const Json& s) { return (s.is_boolean() && s.get<bool>()) || (s.is_object() && s.empty()); }

Json both_of(const Json& a, const Json& b) {
  if (is_true(a) || a == b) return b;
  if (is_true(b)) return a;
  return Json{{"allOf", Json::array({a, b})}};
}

std::set<std::string> types_of(const Json& s) {
  static const std::set<std::string> all{"null", "boolean", "object", "array", "number", "integer", "string"};
  if (s.is_boolean()) return s.get<bool>() ? all : std::set<std::string>{};
  std::set<std::string> t;
  if (s.contains("const") || s.contains("enum")) {
    for (const Json& v : s.contains("const") ? Json::array({s["const"]}) : s["enum"]) t.insert(type_of(v));
    return t;
  }
  if (!s.contains("type")) return all;
  if (s["type"].is_string()) t.insert(s["type"].get<std::string>());
  else for (const Json& x : s["type"]) t.insert(x.get<std::string>());
  if (t.count("number")) t.insert("integer");
  return t;
}

class Merger {
 public:
  Merger(SchemaCompiler& c, std::string path) : c_(c), path_(std::move(path)) {}

  // Follows $ref and nested allOf until a plain schema.
  Json plain(const Json& s, int depth = 0) {
    if (depth > 32) c_.refuse("allOf", path_, "a $ref cycle inside allOf/oneOf is not supported");
    if (!s.is_object()) return s;
    if (s.contains("$ref") && s["$ref"].is_string()) return plain(c_.resolve(s["$ref"].get<std::string>(), path_), depth + 1);
    if (s.contains("allOf")) return plain(merge(s), depth + 1);
    return s;
  }

  Json merge(const Json& schema) {
    Json acc = Json::object();
    for (const auto& [k, v] : schema.items())
      if (k != "allOf") acc[k] = v;
    for (const Json& b : schema["allOf"]) {
      const Json p = plain(b);
      if (p.is_boolean()) {
        if (!p.get<bool>()) return false;
        continue;
      }
      acc = two(plain(acc), p);
      if (acc.is_boolean()) return acc;
    }
    return acc;
  }

 private:
  [[noreturn]] void differ(const std::string& k) {
    c_.refuse(k, path_ + "/allOf", "allOf whose branches give '" + k + "' different values is not supported");
  }

  Json two(Json a, const Json& b) {
    if (a.is_boolean()) return a.get<bool>() ? b : a;
    for (const auto& [k, v] : b.items()) {
      if (is_annotation(k) || k == "$defs" || k == "definitions" || k == "properties" || k == "additionalProperties") continue;
      if (!a.contains(k)) {
        a[k] = v;
        continue;
      }
      Json& x = a[k];
      if (json_equal(x, v)) continue;
      if (k == "type") {
        const std::set<std::string> ta = types_of(Json{{"type", x}}), tb = types_of(Json{{"type", v}});
        Json t = Json::array();
        for (const std::string& s : ta)
          if (tb.count(s) && !(s == "integer" && ta.count("number") && tb.count("number"))) t.push_back(s);
        x = t;
      } else if (k == "required") {
        for (const Json& r : v)
          if (std::find(x.begin(), x.end(), r) == x.end()) x.push_back(r);
      } else if (k == "minimum" || k == "minLength" || k == "minItems" || (k == "exclusiveMinimum" && v.is_number() && x.is_number())) {
        if (v.get<double>() > x.get<double>()) x = v;
      } else if (k == "maximum" || k == "maxLength" || k == "maxItems" || (k == "exclusiveMaximum" && v.is_number() && x.is_number())) {
        if (v.get<double>() < x.get<double>()) x = v;
      } else if (k == "pattern") {
        a["x-exspec-patterns"].push_back(v);
      } else if (k == "enum" || k == "const") {
        Json keep = Json::array();
        const Json xs = a.contains("const") ? Json::array({a["const"]}) : a["enum"];
        const Json vs = k == "const" ? Json::array({v}) : v;
        for (const Json& p : xs)
          for (const Json& q : vs)
            if (json_equal(p, q)) keep.push_back(p);
        a.erase("const");
        a["enum"] = keep;
      } else if (k == "items") {
        x = both_of(x, v);
      } else {
        differ(k);
      }
    }
    if (b.contains("const") && a.contains("enum") && a.contains("const")) a.erase("const");
    merge_objects(a, b);
    return a;
  }

  // properties and additionalProperties together: a key either side does not list is governed by
  // that side's additionalProperties.
  static void merge_objects(Json& a, const Json& b) {
    if (!b.contains("properties") && !b.contains("additionalProperties")) return;
    const Json none = Json::object();
    const Json pa = a.contains("properties") ? a["properties"] : none, pb = b.contains("properties") ? b["properties"] : none;
    const Json apa = a.contains("additionalProperties") ? a["additionalProperties"] : Json(true);
    const Json apb = b.contains("additionalProperties") ? b["additionalProperties"] : Json(true);
    Json props = Json::object();
    for (const auto& [k, v] : pa.items()) props[k] = both_of(v, pb.contains(k) ? pb[k] : apb);
    for (const auto& [k, v] : pb.items())
      if (!pa.contains(k)) props[k] = both_of(apa, v);
    if (!props.empty()) a["properties"] = props;
    if (a.contains("additionalProperties") || b.contains("additionalProperties")) a["additionalProperties"] = both_of(apa, apb);
  }

  SchemaCompiler& c_;
  std::string path_;
};

bool disjoint(Merger& m, const Json& x0, const Json& y0) {
  const Json x = m.plain(x0), y = m.plain(y0);
  const std::set<std::string> tx = types_of(x), ty = types_of(y);
  if (std::none_of(tx.begin(), tx.end(), [&](const std::string& t) { return ty.count(t) > 0; })) return true;
  if (x.is_object() && y.is_object() && (x.contains("const") || x.contains("enum")) && (y.contains("const") || y.contains("enum"))) {
    const Json xs = x.contains("const") ? Json::array({x["const"]}) : x["enum"];
    const Json ys = y.contains("const") ? Json::array({y["const"]}) : y["enum"];
    for (const Json& p : xs)
      for (const Json& q : ys)
        if (json_equal(p, q)) return false;
    return true;
  }
  if (!x.is_object() || !y.is_object() || !x.contains("properties") || !y.contains("properties")) return false;
  auto required = [](const Json& s, const std::string& k) {
    return s.contains("required") && std::find(s["required"].begin(), s["required"].end(), Json(k)) != s["required"].end();
  };
  for (const auto& [k, v] : x["properties"].items())  // a discriminator: a required property no value of which fits both
    if (y["properties"].contains(k) && required(x, k) && required(y, k) && disjoint(m, v, y["properties"][k])) return true;
  return false;
}

}  // namespace

Json merge_all_of(SchemaCompiler& c, const Json& schema, const std::string& path) {
  Merger m(c, path);
  return m.merge(schema);
}

void check_one_of(SchemaCompiler& c, const Json& branches, const std::string& path) {
  Merger m(c, path);
  for (size_t i = 0; i < branches.size(); ++i)
    for (size_t j = i + 1; j < branches.size(); ++j)
      if (!disjoint(m, branches[i], branches[j]))
        c.refuse("oneOf", path,
                 "oneOf branches " + std::to_string(i) + " and " + std::to_string(j) +
                     " may both match; only branches that cannot overlap (types, constants, or a required "
                     "discriminating property) are supported");
}

}  // namespace exspec::grammar::json_detail
