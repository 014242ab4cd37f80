// Objects (properties in the schema's order, optional ones skippable, additional ones after) and
// arrays (prefixItems / draft-4 tuple items, items, minItems, maxItems).
#include "grammar/json_compiler.h"

namespace exspec::grammar::json_detail {
namespace {

// A key as the grammar writes it, any string except the listed names.
ExprPtr other_key(SchemaCompiler& c, const Json& props) {
  if (props.empty()) return c.string_rule();
  std::vector<ExprPtr> listed;
  for (const auto& [k, v] : props.items()) listed.push_back(lit(compact_json(Json(k))));
  return minus(seq({lit("\""), star(json_string_char()), lit("\"")}), alt(std::move(listed)));
}

}  // namespace

ExprPtr object_expr(SchemaCompiler& c, const Json& schema, const std::string& path) {
  static const Json none = Json::object();
  const Json& props = schema.contains("properties") ? schema["properties"] : none;
  // Strict objects: listed properties and nothing else, unless the schema says otherwise; an
  // object schema that lists none stays any object.
  const Json additional = schema.contains("additionalProperties") ? schema["additionalProperties"]
                                                                  : Json(!c.options().strict_objects || props.empty());
  const bool closed = additional.is_boolean() && !additional.get<bool>();
  std::set<std::string> required;
  if (schema.contains("required"))
    for (const Json& r : schema["required"]) {
      if (!r.is_string()) c.refuse("required", path + "/required", "required must list property names");
      const std::string name = r.get<std::string>();
      if (!props.contains(name)) {
        if (closed) return nothing();  // a required property that may not appear: no object fits
        c.refuse("required", path + "/required",
                 "required property '" + name + "' is not in properties (list it there with its schema)");
      }
      required.insert(name);
    }
  const int n = static_cast<int>(props.size());
  auto s = [](int i, int e) { return 2 * i + e; };  // after i properties, e: something written
  std::vector<Expr::GraphEdge> edges;
  int i = 0;
  for (const auto& [key, sub] : props.items()) {
    const ExprPtr kv = seq({lit(compact_json(Json(key)) + ":"), c.value(sub, path + "/properties/" + pointer_token(key))});
    edges.push_back({s(i, 0), s(i + 1, 1), kv});
    edges.push_back({s(i, 1), s(i + 1, 1), seq({lit(","), kv})});
    if (!required.count(key)) {
      edges.push_back({s(i, 0), s(i + 1, 0), nullptr});
      edges.push_back({s(i, 1), s(i + 1, 1), nullptr});
    }
    ++i;
  }
  if (!closed) {
    const ExprPtr kv = seq({other_key(c, props), lit(":"), c.value(additional, path + "/additionalProperties")});
    edges.push_back({s(n, 0), s(n, 1), kv});
    edges.push_back({s(n, 1), s(n, 1), seq({lit(","), kv})});
  }
  return c.own_rule("object", seq({lit("{"), graph(2 * n + 2, s(0, 0), {s(n, 0), s(n, 1)}, std::move(edges)), lit("}")}));
}

ExprPtr array_expr(SchemaCompiler& c, const Json& schema, const std::string& path) {
  Json prefix = Json::array(), rest = true;
  std::string prefix_key = "prefixItems", rest_path = path + "/items";
  if (schema.contains("prefixItems")) {
    prefix = schema["prefixItems"];
    if (schema.contains("items")) rest = schema["items"];
  } else if (schema.contains("items") && schema["items"].is_array()) {  // draft 4 tuples
    prefix = schema["items"];
    prefix_key = "items";
    if (schema.contains("additionalItems")) rest = schema["additionalItems"], rest_path = path + "/additionalItems";
  } else if (schema.contains("items")) {
    rest = schema["items"];
  }
  const auto k64 = static_cast<int64_t>(prefix.size());
  const int64_t lo64 = count_of(schema, "minItems", 0), max_items = count_of(schema, "maxItems", -1);
  int64_t hi64 = max_items;
  const bool open = !(rest.is_boolean() && !rest.get<bool>());
  if (!open) hi64 = hi64 < 0 ? k64 : std::min(hi64, k64);
  if (hi64 >= 0 && hi64 < lo64) return nothing();
  // Before anything is built: an element past the first writes "," and at least one byte or
  // reference, so a rule that counts C elements needs at least 2C + 1 DFA states.
  const int64_t count = hi64 >= 0 ? hi64 : std::max(k64, lo64);
  const std::string counted_by = count == max_items ? "maxItems" : count == lo64 && lo64 > k64 ? "minItems" : prefix_key;
  check_states(c, counted_by, path + "/" + counted_by, static_cast<size_t>(2 * count + 1), kMaxRuleStates);
  const int k = static_cast<int>(k64), lo = static_cast<int>(lo64), hi = static_cast<int>(hi64);
  const ExprPtr rest_expr = open ? c.value(rest, rest_path) : nothing();
  auto element = [&](int i) {
    return i < k ? c.value(prefix[static_cast<size_t>(i)], path + "/" + prefix_key + "/" + std::to_string(i)) : rest_expr;
  };
  // The elements past the prefix are alike: counted repetitions (flat: thousands of nested levels
  // would overflow the stack of every recursive pass over the expression).
  const int kk = hi >= 0 ? std::min(k, hi) : k;  // prefix positions used
  const int required = std::max(0, lo - kk), optional = hi >= 0 ? hi - std::max(kk, lo) : -1;  // -1: any number
  const ExprPtr item = seq({lit(","), rest_expr});
  ExprPtr tail;
  if (kk > 0) tail = seq({repeat(item, required, required), repeat(item, 0, optional)});
  else if (required > 0) tail = seq({rest_expr, repeat(item, required - 1, required - 1), repeat(item, 0, optional)});
  else tail = optional == 0 ? empty() : opt(seq({rest_expr, repeat(item, 0, optional < 0 ? -1 : optional - 1)}));
  // tail(i): the elements after the first i, built from the last prefix position down.
  for (int i = kk - 1; i >= 0; --i) {
    const ExprPtr next = seq({i == 0 ? empty() : lit(","), element(i), tail});
    tail = i >= lo ? opt(next) : next;
  }
  return c.own_rule("array", seq({lit("["), tail, lit("]")}));
}

}  // namespace exspec::grammar::json_detail
