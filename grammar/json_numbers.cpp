// Numbers and integers between bounds (minimum, maximum, exclusiveMinimum, exclusiveMaximum), as
// regular languages over decimal text: a bounded number is written without exponent, an integer
// without fraction, neither as "-0". The bound is exact (decimal digits, not a double).
#include <string>

#include "grammar/json_compiler.h"

namespace exspec::grammar::json_detail {
namespace {

struct Decimal {
  bool negative = false;
  std::string whole = "0";  // no leading zeros
  std::string frac;         // no trailing zeros
  bool zero() const { return whole == "0" && frac.empty(); }
};

Decimal decimal_of(const Json& v) {
  const std::string text = v.dump();
  Decimal d;
  size_t i = 0;
  if (text[i] == '-') d.negative = true, ++i;
  std::string digits;
  long point = -1, exp = 0;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') point = static_cast<long>(digits.size());
    else digits += text[i];
  }
  if (point < 0) point = static_cast<long>(digits.size());
  if (i < text.size()) exp = std::stol(text.substr(i + 1));
  point += exp;
  while (point < 0) digits.insert(digits.begin(), '0'), ++point;
  while (static_cast<long>(digits.size()) < point) digits += '0';
  d.whole = digits.substr(0, static_cast<size_t>(point));
  d.frac = digits.substr(static_cast<size_t>(point));
  d.whole.erase(0, std::min(d.whole.find_first_not_of('0'), d.whole.size()));
  if (d.whole.empty()) d.whole = "0";
  while (!d.frac.empty() && d.frac.back() == '0') d.frac.pop_back();
  if (d.zero()) d.negative = false;
  return d;
}

ExprPtr digit() { return chars(CharSet::range('0', '9')); }
ExprPtr digits(char lo, char hi) { return lo > hi ? nothing() : chars(CharSet::range(static_cast<uint32_t>(lo), static_cast<uint32_t>(hi))); }
ExprPtr exactly(int n) { return repeat(digit(), n, n); }

class Bounds {
 public:
  explicit Bounds(bool integer) : integer_(integer) {}

  ExprPtr unsigned_all() const { return seq({alt({lit("0"), seq({digits('1', '9'), star(digit())})}), any_frac()}); }
  ExprPtr nonzero() const {
    const ExprPtr zero = seq({lit("0"), integer_ ? empty() : opt(seq({lit("."), plus(lit("0"))}))});
    return minus(unsigned_all(), zero);
  }
  ExprPtr at_least(const Decimal& c, bool incl) const {
    if (!c.negative) return greater(c, incl);
    return alt({unsigned_all(), seq({lit("-"), both(nonzero(), less(c, incl))})});
  }
  ExprPtr at_most(const Decimal& c, bool incl) const {
    if (!c.negative) return alt({less(c, incl), seq({lit("-"), nonzero()})});
    return seq({lit("-"), greater(c, incl)});
  }

 private:
  ExprPtr any_frac() const { return integer_ ? empty() : opt(seq({lit("."), plus(digit())})); }

  // Unsigned texts whose value is > c (or == c when incl); c's sign is ignored.
  ExprPtr greater(const Decimal& c, bool incl) const {
    const std::string& w = c.whole;
    const int n = static_cast<int>(w.size());
    std::vector<ExprPtr> alts{seq({digits('1', '9'), repeat(digit(), n, -1), any_frac()})};  // more digits
    for (int k = 0; k < n; ++k)  // same length, first larger digit at k
      alts.push_back(seq({lit(w.substr(0, static_cast<size_t>(k))), digits(static_cast<char>(w[static_cast<size_t>(k)] + 1), '9'),
                          exactly(n - k - 1), any_frac()}));
    ExprPtr rest;
    if (integer_) rest = c.frac.empty() && incl ? empty() : nothing();
    else rest = alt({frac_greater(c.frac), incl ? frac_equal(c.frac) : nothing()});
    alts.push_back(seq({lit(w), rest}));
    return alt(std::move(alts));
  }

  ExprPtr less(const Decimal& c, bool incl) const {
    const std::string& w = c.whole;
    const int n = static_cast<int>(w.size());
    std::vector<ExprPtr> alts;
    if (n >= 2) alts.push_back(seq({alt({lit("0"), seq({digits('1', '9'), repeat(digit(), 0, n - 2)})}), any_frac()}));
    for (int k = 0; k < n; ++k) {
      const char low = k == 0 && n > 1 ? '1' : '0';
      alts.push_back(seq({lit(w.substr(0, static_cast<size_t>(k))), digits(low, static_cast<char>(w[static_cast<size_t>(k)] - 1)),
                          exactly(n - k - 1), any_frac()}));
    }
    ExprPtr rest;
    if (integer_) rest = c.frac.empty() ? (incl ? empty() : nothing()) : empty();
    else rest = alt({frac_less(c.frac), incl ? frac_equal(c.frac) : nothing()});
    alts.push_back(seq({lit(w), rest}));
    return alt(std::move(alts));
  }

  // Fractions (".digits", or none) equal to, greater than, less than 0.f.
  static ExprPtr frac_equal(const std::string& f) {
    if (f.empty()) return opt(seq({lit("."), plus(lit("0"))}));
    return seq({lit("." + f), star(lit("0"))});
  }
  static ExprPtr frac_greater(const std::string& f) {
    std::vector<ExprPtr> alts;
    for (size_t k = 0; k < f.size(); ++k)
      alts.push_back(seq({lit("." + f.substr(0, k)), digits(static_cast<char>(f[k] + 1), '9'), star(digit())}));
    alts.push_back(seq({lit("." + f), star(digit()), digits('1', '9'), star(digit())}));
    return alt(std::move(alts));
  }
  static ExprPtr frac_less(const std::string& f) {
    if (f.empty()) return nothing();
    std::vector<ExprPtr> alts{empty()};
    for (size_t k = 0; k < f.size(); ++k) {
      alts.push_back(seq({lit("." + f.substr(0, k)), digits('0', static_cast<char>(f[k] - 1)), star(digit())}));
      if (k > 0) alts.push_back(lit("." + f.substr(0, k)));
    }
    return alt(std::move(alts));
  }

  bool integer_;
};

}  // namespace

ExprPtr number_expr(SchemaCompiler& c, const Json& schema, const std::string& path, bool integer) {
  Json key = Json::object();
  for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
    if (schema.contains(k)) key[k] = schema[k];
  if (key.empty()) return integer ? c.integer_rule() : c.number_rule();
  for (const char* k : {"exclusiveMinimum", "exclusiveMaximum"})  // draft 4: a flag on minimum/maximum
    if (key.contains(k) && key[k].is_boolean() && !key.contains(std::string(k) == "exclusiveMinimum" ? "minimum" : "maximum"))
      c.refuse(k, path + "/" + k, std::string(k) + " as a boolean needs its minimum/maximum");
  (void)path;
  return c.shared_rule(std::string(integer ? "integer:" : "number:") + key.dump(), integer ? "integer-range" : "number-range", [&] {
    const Bounds b(integer);
    std::vector<ExprPtr> parts;
    const bool ex_min_flag = key.contains("exclusiveMinimum") && key["exclusiveMinimum"].is_boolean() && key["exclusiveMinimum"].get<bool>();
    const bool ex_max_flag = key.contains("exclusiveMaximum") && key["exclusiveMaximum"].is_boolean() && key["exclusiveMaximum"].get<bool>();
    if (key.contains("minimum")) parts.push_back(b.at_least(decimal_of(key["minimum"]), !ex_min_flag));
    if (key.contains("maximum")) parts.push_back(b.at_most(decimal_of(key["maximum"]), !ex_max_flag));
    if (key.contains("exclusiveMinimum") && key["exclusiveMinimum"].is_number())
      parts.push_back(b.at_least(decimal_of(key["exclusiveMinimum"]), false));
    if (key.contains("exclusiveMaximum") && key["exclusiveMaximum"].is_number())
      parts.push_back(b.at_most(decimal_of(key["exclusiveMaximum"]), false));
    if (parts.empty()) return integer ? free_number(true) : free_number(false);
    ExprPtr e = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) e = both(e, parts[i]);
    return e;
  });
}

}  // namespace exspec::grammar::json_detail
