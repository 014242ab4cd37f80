// JSON strings and numbers without bounds, and strings with constraints (length, pattern, format).
#include <algorithm>
#include <cmath>

#include "grammar/json_compiler.h"
#include "grammar/regex.h"

namespace exspec::grammar::json_detail {
namespace {

CharSet set_of(const std::string& ascii) {
  CharSet s;
  for (unsigned char c : ascii) s.add(c, c);
  return s;
}

ExprPtr hex() {
  CharSet s = CharSet::range('0', '9');
  s.add('a', 'f');
  s.add('A', 'F');
  return chars(s);
}

}  // namespace

ExprPtr json_string_char() {
  CharSet raw = CharSet::any().minus(CharSet::range(0, 0x1F));
  raw = raw.minus(set_of("\"\\"));
  CharSet not_d = CharSet::range('0', '9');
  not_d.add('a', 'c');
  not_d.add('e', 'f');
  not_d.add('A', 'C');
  not_d.add('E', 'F');
  const ExprPtr h = hex(), d = chars(set_of("dD"));
  // \uXXXX: a scalar value, or a surrogate pair; never a lone surrogate.
  const ExprPtr plain = alt({seq({chars(not_d), h, h, h}), seq({d, chars(CharSet::range('0', '7')), h, h})});
  const ExprPtr high = seq({d, chars(set_of("89abAB")), h, h});
  CharSet c_f = CharSet::range('c', 'f');
  c_f.add('C', 'F');
  const ExprPtr low = seq({d, chars(c_f), h, h});
  return alt({chars(raw), seq({lit("\\"), chars(set_of("\"\\/bfnrt"))}), seq({lit("\\u"), plain}),
              seq({lit("\\u"), high, lit("\\u"), low})});
}

ExprPtr free_number(bool integer) {
  const ExprPtr digit = chars(CharSet::range('0', '9'));
  const ExprPtr whole = seq({opt(lit("-")), alt({lit("0"), seq({chars(CharSet::range('1', '9')), star(digit)})})});
  if (integer) return whole;
  return seq({whole, opt(seq({lit("."), plus(digit)})), opt(seq({chars(set_of("eE")), opt(chars(set_of("+-"))), plus(digit)}))});
}

ExprPtr string_expr(SchemaCompiler& c, const Json& schema, const std::string& path) {
  Json key = Json::object();
  for (const char* k : {"minLength", "maxLength", "pattern", "format", "x-exspec-patterns"})
    if (schema.contains(k)) key[k] = schema[k];
  if (key.empty()) return c.string_rule();
  return c.shared_rule("string:" + key.dump(), "string-constrained", [&] {
    std::vector<ExprPtr> parts;
    if (key.contains("minLength") || key.contains("maxLength")) {
      const int64_t lo = count_of(key, "minLength", 0), hi = count_of(key, "maxLength", -1);
      if (hi >= 0 && hi < lo) return nothing();
      // Counted before it is built (the repetition is one node; its copies come with the NFA).
      auto narrow = [](int64_t n) { return static_cast<int>(std::min<int64_t>(n, int64_t{1} << 30)); };  // still over any budget
      const ExprPtr counted = repeat(json_string_char(), narrow(lo), narrow(hi));
      const std::string k = hi >= 0 ? "maxLength" : "minLength";
      check_states(c, k, path + "/" + k, nfa_states_at_least(*counted, kNfaLimit + 1), kNfaLimit);
      parts.push_back(counted);
    }
    std::vector<std::pair<std::string, std::string>> patterns;
    if (key.contains("pattern")) patterns.emplace_back(key["pattern"].get<std::string>(), path + "/pattern");
    if (key.contains("x-exspec-patterns"))
      for (const Json& p : key["x-exspec-patterns"]) patterns.emplace_back(p.get<std::string>(), path + "/allOf");
    for (const auto& [p, where] : patterns) parts.push_back(json_string_content(parse_regex(p, RegexMode::Search, where)));
    if (key.contains("format")) {
      const std::string f = key["format"].get<std::string>();
      ExprPtr e = format_expr(f);
      if (!e) c.refuse("format", path + "/format", "format '" + f + "' is not supported");
      parts.push_back(json_string_content(e));
    }
    ExprPtr content = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) content = both(content, parts[i]);
    return seq({lit("\""), content, lit("\"")});
  });
}

std::string type_of(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  if (v.is_number_integer()) return "integer";
  const double x = v.get<double>();
  return std::isfinite(x) && x == std::floor(x) ? "integer" : "number";
}

bool json_equal(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_float() || b.is_number_float()) return a.get<double>() == b.get<double>();
    return a == b;
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!json_equal(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a.items())
      if (!b.contains(k) || !json_equal(v, b[k])) return false;
    return true;
  }
  return a == b;
}

}  // namespace exspec::grammar::json_detail
