#include "grammar/json_schema.h"

#include "grammar/error.h"
#include "grammar/gbnf.h"
#include "grammar/json_compiler.h"
#include "grammar/regex.h"

namespace exspec::grammar {
namespace json_detail {

void SchemaCompiler::refuse(const std::string& keyword, const std::string& path, const std::string& why) const {
  throw GrammarError(keyword, path, "JSON Schema: " + why);
}

int SchemaCompiler::rule(const std::string& name, bool shared) { return g_.add(name, nullptr, shared); }

ExprPtr SchemaCompiler::shared_rule(const std::string& key, const std::string& name, const std::function<ExprPtr()>& body) {
  auto it = shared_.find(key);
  if (it != shared_.end()) return ref(it->second);
  const int r = rule(name, true);
  shared_.emplace(key, r);
  g_.rules[static_cast<size_t>(r)].body = body();
  return ref(r);
}

ExprPtr SchemaCompiler::own_rule(const std::string& name, ExprPtr body) { return ref(g_.add(name, std::move(body))); }

ExprPtr SchemaCompiler::string_rule() {
  return shared_rule("string", "string", [] { return seq({lit("\""), star(json_string_char()), lit("\"")}); });
}
ExprPtr SchemaCompiler::number_rule() { return shared_rule("number", "number", [] { return free_number(false); }); }
ExprPtr SchemaCompiler::integer_rule() { return shared_rule("integer", "integer", [] { return free_number(true); }); }

ExprPtr SchemaCompiler::any_value_rule() {
  auto it = shared_.find("value");
  if (it != shared_.end()) return ref(it->second);
  const int value = rule("value", true), object = rule("object", true), array = rule("array", true);
  shared_.emplace("value", value);
  shared_.emplace("object", object);
  const ExprPtr v = ref(value), s = string_rule();
  g_.rules[static_cast<size_t>(value)].body =
      alt({ref(object), ref(array), s, number_rule(), lit("true"), lit("false"), lit("null")});
  const ExprPtr member = seq({s, lit(":"), v});
  g_.rules[static_cast<size_t>(object)].body =
      seq({lit("{"), opt(seq({member, star(seq({lit(","), member}))})), lit("}")});
  g_.rules[static_cast<size_t>(array)].body = seq({lit("["), opt(seq({v, star(seq({lit(","), v}))})), lit("]")});
  return v;
}

ExprPtr SchemaCompiler::any_object_rule() {
  any_value_rule();
  return ref(shared_.at("object"));
}

const Json& SchemaCompiler::resolve(const std::string& ref, const std::string& path) const {
  if (ref.empty() || ref[0] != '#')
    refuse("$ref", path, "only references within the schema (\"#/...\") are supported, not '" + ref + "'");
  if (ref.size() > 1 && ref[1] != '/') refuse("$ref", path, "anchor references ('" + ref + "') are not supported");
  try {
    const Json& target = root_.at(nlohmann::ordered_json::json_pointer(ref.substr(1)));
    return target;
  } catch (const std::exception&) {
    refuse("$ref", path, "'" + ref + "' points to nothing in the schema");
  }
}

ExprPtr SchemaCompiler::ref_expr(const std::string& r, const std::string& path) {
  auto it = refs_.find(r);
  if (it != refs_.end()) return ref(it->second);
  const Json& target = resolve(r, path);
  const int id = rule(r == "#" ? "root-ref" : r.substr(r.find_last_of('/') + 1), true);
  refs_.emplace(r, id);  // before its body: the body may refer to itself
  g_.rules[static_cast<size_t>(id)].body = value(target, r);
  return ref(id);
}

ExprPtr SchemaCompiler::enumeration(const Json& schema, const std::string& path) {
  for (const auto& [k, v] : schema.items())
    if (k != "enum" && k != "const" && k != "type" && k != "$defs" && k != "definitions" && !is_annotation(k))
      refuse(k, path + "/" + pointer_token(k), "'" + k + "' next to enum/const is not supported");
  std::set<std::string> types;
  if (schema.contains("type")) {
    const Json& t = schema["type"];
    if (t.is_string()) types.insert(t.get<std::string>());
    else for (const Json& x : t) types.insert(x.get<std::string>());
  }
  std::vector<Json> values;
  if (schema.contains("const")) values.push_back(schema["const"]);
  if (schema.contains("enum")) {
    if (!schema["enum"].is_array()) refuse("enum", path + "/enum", "enum must be an array");
    for (const Json& v : schema["enum"])
      if (!schema.contains("const") || json_equal(v, schema["const"])) values.push_back(v);
    if (schema.contains("const") && values.size() > 1) values.resize(1);
  }
  std::vector<ExprPtr> alts;
  for (const Json& v : values) {
    const std::string t = type_of(v);
    if (!types.empty() && !types.count(t) && !(t == "integer" && types.count("number"))) continue;
    alts.push_back(lit(compact_json(v)));
  }
  return alt(std::move(alts));
}

ExprPtr SchemaCompiler::alternatives(const Json& schema, const std::string& path) {
  if (schema.contains("anyOf") && schema.contains("oneOf")) refuse("oneOf", path + "/oneOf", "anyOf and oneOf together");
  const std::string key = schema.contains("anyOf") ? "anyOf" : "oneOf";
  const Json& branches = schema[key];
  if (!branches.is_array() || branches.empty()) refuse(key, path + "/" + key, key + " must be a non-empty array");
  Json siblings = Json::object();
  for (const auto& [k, v] : schema.items())
    if (k != key && !is_annotation(k) && k != "$defs" && k != "definitions") siblings[k] = v;
  Json effective = Json::array();
  for (const Json& b : branches)
    effective.push_back(siblings.empty() ? b : Json{{"allOf", Json::array({siblings, b})}});
  if (key == "oneOf") check_one_of(*this, effective, path + "/oneOf");
  std::vector<ExprPtr> alts;
  for (size_t i = 0; i < effective.size(); ++i) alts.push_back(value(effective[i], path + "/" + key + "/" + std::to_string(i)));
  return alt(std::move(alts));
}

ExprPtr SchemaCompiler::typed(const std::string& type, const Json& schema, const std::string& path) {
  if (type == "null") return lit("null");
  if (type == "boolean") return alt({lit("true"), lit("false")});
  if (type == "string") return string_expr(*this, schema, path);
  if (type == "integer") return number_expr(*this, schema, path, true);
  if (type == "number") return number_expr(*this, schema, path, false);
  if (type == "object") return object_expr(*this, schema, path);
  if (type == "array") return array_expr(*this, schema, path);
  refuse("type", path + "/type", "unknown type '" + type + "'");
}

ExprPtr SchemaCompiler::value(const Json& schema, const std::string& path) {
  if (schema.is_boolean()) return schema.get<bool>() ? any_value_rule() : nothing();
  if (!schema.is_object()) refuse("schema", path, "a schema must be an object or a boolean");
  check_keywords(*this, schema, path, &schema == &root_);
  if (schema.contains("$ref")) {
    for (const auto& [k, v] : schema.items())
      if (k != "$ref" && k != "$defs" && k != "definitions" && !is_annotation(k))
        refuse(k, path + "/" + pointer_token(k), "'" + k + "' next to $ref is not supported");
    if (!schema["$ref"].is_string()) refuse("$ref", path + "/$ref", "$ref must be a string");
    return ref_expr(schema["$ref"].get<std::string>(), path + "/$ref");
  }
  if (schema.contains("allOf")) return value(merge_all_of(*this, schema, path), path);
  if (schema.contains("anyOf") || schema.contains("oneOf")) return alternatives(schema, path);
  if (schema.contains("enum") || schema.contains("const")) return enumeration(schema, path);
  std::vector<std::string> types;
  if (!schema.contains("type")) {
    types = {"null", "boolean", "object", "array", "number", "string"};
  } else if (schema["type"].is_string()) {
    types.push_back(schema["type"].get<std::string>());
  } else if (schema["type"].is_array()) {
    for (const Json& t : schema["type"]) {
      if (!t.is_string()) refuse("type", path + "/type", "type must name types");
      types.push_back(t.get<std::string>());
    }
  } else {
    refuse("type", path + "/type", "type must be a string or an array of strings");
  }
  const bool number = std::find(types.begin(), types.end(), "number") != types.end();
  std::vector<ExprPtr> alts;
  for (const std::string& t : types)
    if (!(t == "integer" && number)) alts.push_back(typed(t, schema, path));  // number covers integer
  return alt(std::move(alts));
}

Grammar SchemaCompiler::finish(ExprPtr root) {
  const int r = g_.add("root", std::move(root));
  g_.root = r;
  return inline_rules(g_);
}

}  // namespace json_detail

using json_detail::Json;

Grammar grammar_from_parsed_schema(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options) {
  json_detail::SchemaCompiler c(schema, options);
  return c.finish(c.value(schema, "#"));
}

Grammar grammar_from_json_schema(std::string_view text, const JsonSchemaOptions& options) {
  Json schema;
  try {
    schema = Json::parse(text);
  } catch (const std::exception& e) {
    throw GrammarError("schema", "#", std::string("JSON Schema: not valid JSON: ") + e.what());
  }
  return grammar_from_parsed_schema(schema, options);
}

Grammar grammar_json_object() {
  const Json any = Json::object();
  json_detail::SchemaCompiler c(any, {});
  return c.finish(c.any_object_rule());
}

Grammar grammar_from_choices(const std::vector<std::string>& choices) {
  std::vector<ExprPtr> alts;
  for (const std::string& s : choices) alts.push_back(lit(s));
  Grammar g;
  g.root = g.add("root", alt(std::move(alts)));
  return g;
}

Grammar grammar_from_regex(std::string_view pattern) {
  Grammar g;
  g.root = g.add("root", parse_regex(pattern, RegexMode::FullMatch));
  return g;
}

}  // namespace exspec::grammar
