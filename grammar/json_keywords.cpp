// Which JSON Schema keywords the compiler knows: annotations it may ignore, constraints it
// supports, and everything else refused by name and path.
#include <algorithm>
#include <set>

#include "grammar/json_compiler.h"

namespace exspec::grammar::json_detail {
namespace {

const std::set<std::string>& annotations() {
  static const std::set<std::string> s{"title", "description", "$comment", "default", "examples", "example",
                                       "$schema", "deprecated", "readOnly", "writeOnly", "contentMediaType",
                                       "contentEncoding", "contentSchema"};
  return s;
}

const std::set<std::string>& supported() {
  static const std::set<std::string> s{
      "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions",
      "properties", "required", "additionalProperties", "items", "prefixItems", "additionalItems",
      "minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern", "format",
      "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
  return s;
}

bool non_negative_integer(const Json& v) {
  return (v.is_number_integer() && v.get<int64_t>() >= 0) ||
         (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>())));
}

}  // namespace

int64_t count_of(const Json& schema, const char* keyword, int64_t dflt) {
  constexpr int64_t kClamp = int64_t{1} << 40;
  if (!schema.contains(keyword)) return dflt;
  const Json& v = schema[keyword];
  if (v.is_number_float()) return static_cast<int64_t>(std::min<double>(v.get<double>(), static_cast<double>(kClamp)));
  return std::min<int64_t>(v.get<int64_t>(), kClamp);
}

void check_states(const SchemaCompiler& c, const std::string& keyword, const std::string& path, size_t states, size_t limit) {
  if (states <= limit) return;
  c.refuse(keyword, path, keyword + " is too large: the grammar would need at least " + std::to_string(states) +
                              " automaton states, more than the limit of " + std::to_string(limit));
}

bool is_annotation(const std::string& k) { return annotations().count(k) || k.rfind("x-", 0) == 0; }

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

void check_keywords(const SchemaCompiler& c, const Json& schema, const std::string& path, bool root) {
  for (const auto& [k, v] : schema.items()) {
    const std::string at = path + "/" + pointer_token(k);
    if ((k == "$id" || k == "id") && root) continue;  // the document's own name: refs stay "#..."
    if (is_annotation(k)) continue;
    if (!supported().count(k)) c.refuse(k, at, "keyword '" + k + "' is not supported");
    if ((k == "minItems" || k == "maxItems" || k == "minLength" || k == "maxLength") && !non_negative_integer(v))
      c.refuse(k, at, k + " must be a non-negative integer");
    if ((k == "minimum" || k == "maximum") && !v.is_number()) c.refuse(k, at, k + " must be a number");
    if ((k == "exclusiveMinimum" || k == "exclusiveMaximum") && !v.is_number() && !v.is_boolean())
      c.refuse(k, at, k + " must be a number (or, in draft 4, a boolean)");
    if (k == "uniqueItems" && !(v.is_boolean() && !v.get<bool>()))
      c.refuse(k, at, "uniqueItems: true is not supported (no grammar can check it)");
    if ((k == "pattern" || k == "format") && !v.is_string()) c.refuse(k, at, k + " must be a string");
    if (k == "required" && !v.is_array() && !v.is_boolean()) c.refuse(k, at, "required must be an array of names");
    if (k == "required" && v.is_boolean()) c.refuse(k, at, "draft 3's boolean required is not supported");
    if ((k == "properties" || k == "$defs" || k == "definitions") && !v.is_object()) c.refuse(k, at, k + " must be an object");
    if ((k == "anyOf" || k == "oneOf" || k == "allOf" || k == "prefixItems") && !v.is_array())
      c.refuse(k, at, k + " must be an array");
  }
}

}  // namespace exspec::grammar::json_detail
