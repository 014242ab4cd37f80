#include "grammar/regex.h"

#include <cstdio>
#include <stdexcept>

#include "grammar/budget.h"
#include "grammar/error.h"
#include "grammar/thompson.h"

namespace exspec::grammar {
namespace {

CharSet digits() { return CharSet::range('0', '9'); }
CharSet word() {
  CharSet s = CharSet::range('a', 'z');
  s.add('A', 'Z');
  s.add('0', '9');
  s.add('_', '_');
  return s;
}
CharSet space() {  // ECMA-262 WhiteSpace and LineTerminator
  CharSet s = CharSet::range(0x09, 0x0D);
  for (uint32_t c : {0x20u, 0xA0u, 0x1680u, 0x2028u, 0x2029u, 0x202Fu, 0x205Fu, 0x3000u, 0xFEFFu}) s.add(c, c);
  s.add(0x2000, 0x200A);
  return s;
}
CharSet dot() {
  CharSet s = CharSet::single('\n');
  s.add('\r', '\r');
  s.add(0x2028, 0x2029);
  return s.complement();
}

class Parser {
 public:
  Parser(std::string_view s, std::string where) : s_(s), where_(std::move(where)) {}

  ExprPtr top(RegexMode mode) {
    std::vector<ExprPtr> alts;
    for (;;) {
      const bool start = eat('^');
      ExprPtr body = sequence(true);
      const bool end = eat('$');
      if (end && !at_end() && peek() != '|') fail("anchor", "'$' is only supported at the end of the pattern or of a top-level alternative");
      if (mode == RegexMode::Search) {
        const ExprPtr any = star(chars(CharSet::any()));
        body = seq({start ? empty() : any, body, end ? empty() : any});
      }
      alts.push_back(body);
      if (!eat('|')) break;
    }
    if (!at_end()) fail("group", "unbalanced ')'");
    return alt(std::move(alts));
  }

 private:
  [[noreturn]] void fail(const std::string& construct, const std::string& msg) const {
    throw GrammarError(construct, (where_.empty() ? "" : where_ + ", ") + "offset " + std::to_string(i_),
                       "regular expression: " + msg);
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return s_[i_]; }
  bool eat(char c) {
    if (!at_end() && s_[i_] == c) return ++i_, true;
    return false;
  }
  uint32_t code_point() {
    uint32_t c;
    if (!utf8_at(s_, i_, c)) fail("utf-8", "the pattern is not valid UTF-8");
    return c;
  }

  ExprPtr alternation() {
    std::vector<ExprPtr> alts{sequence(false)};
    while (eat('|')) alts.push_back(sequence(false));
    return alt(std::move(alts));
  }

  ExprPtr sequence(bool top) {
    std::vector<ExprPtr> items;
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (peek() == '$') {
        if (top) break;
        fail("anchor", "'$' inside a group is not supported");
      }
      if (peek() == '^') fail("anchor", "'^' is only supported at the start of the pattern or of a top-level alternative");
      items.push_back(quantified());
    }
    return seq(std::move(items));
  }

  bool number(int& out) {
    const size_t start = i_;
    long v = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      v = v * 10 + (peek() - '0');
      if (v > 100000) fail("quantifier", "a repetition count above 100000");
      ++i_;
    }
    out = static_cast<int>(v);
    return i_ > start;
  }

  // {n}, {n,}, {n,m}; false (nothing consumed) when the brace is a literal.
  bool braces(int& lo, int& hi) {
    const size_t save = i_;
    ++i_;
    if (!number(lo)) return i_ = save, false;
    hi = lo;
    if (eat(',')) {
      if (!number(hi)) hi = -1;
    }
    if (!eat('}')) return i_ = save, false;
    if (hi >= 0 && hi < lo) fail("quantifier", "a repetition {n,m} with m < n");
    return true;
  }

  ExprPtr quantified() {
    ExprPtr e = atom();
    for (;;) {
      int lo, hi;
      if (at_end()) return e;
      const char c = peek();
      if (c == '*') lo = 0, hi = -1, ++i_;
      else if (c == '+') lo = 1, hi = -1, ++i_;
      else if (c == '?') lo = 0, hi = 1, ++i_;
      else if (c == '{' && braces(lo, hi)) {}
      else return e;
      eat('?');  // lazy: the same language
      if (!at_end() && (peek() == '+')) fail("possessive quantifier", "possessive quantifiers are not supported");
      e = repeat(e, lo, hi);
      // Checked before anything is built: a count, or counts nested inside each other.
      constexpr size_t kLimit = 4 * kMaxRuleStates;
      if (const size_t states = nfa_states_at_least(*e, kLimit + 1); states > kLimit)
        fail("quantifier", "a repetition too large: it would need at least " + std::to_string(states) +
                   " automaton states, more than the limit of " + std::to_string(kLimit));
    }
  }

  ExprPtr group() {
    if (eat('?')) {
      if (eat(':')) {
      } else if (eat('P') || (!at_end() && peek() == '<' && i_ + 1 < s_.size() && s_[i_ + 1] != '=' && s_[i_ + 1] != '!')) {
        if (!eat('<')) fail("group", "expected '<' after (?P");
        while (!at_end() && peek() != '>') ++i_;
        if (!eat('>')) fail("group", "unterminated group name");
      } else if (!at_end() && (peek() == '=' || peek() == '!' || peek() == '<')) {
        fail("lookaround", "lookahead and lookbehind are not supported");
      } else {
        fail("inline flags", "inline flags such as (?i) are not supported");
      }
    }
    ExprPtr e = alternation();
    if (!eat(')')) fail("group", "missing ')'");
    return e;
  }

  ExprPtr atom() {
    const char c = peek();
    if (c == '(') return ++i_, group();
    if (c == '[') return ++i_, chars(char_class());
    if (c == '.') return ++i_, chars(dot());
    if (c == '*' || c == '+' || c == '?') fail("quantifier", "nothing to repeat");
    if (c == '\\') {
      ++i_;
      CharSet set;
      escape(set, false);
      return chars(set);
    }
    if (c == '{') {
      int lo, hi;
      if (braces(lo, hi)) fail("quantifier", "nothing to repeat");
    }
    return chars(CharSet::single(code_point()));
  }

  uint32_t hex_digits(int n) {
    uint32_t v = 0;
    for (int k = 0; k < n; ++k) {
      if (at_end() || hex_digit(peek()) < 0) fail("escape", "expected a hexadecimal digit");
      v = v * 16 + static_cast<uint32_t>(hex_digit(peek()));
      ++i_;
    }
    return v;
  }

  uint32_t unicode_escape() {
    if (eat('{')) {
      uint32_t v = 0;
      int n = 0;
      while (!at_end() && hex_digit(peek()) >= 0) v = v * 16 + static_cast<uint32_t>(hex_digit(s_[i_++])), ++n;
      if (!eat('}') || n == 0 || v > kMaxCodePoint) fail("escape", "bad \\u{...} escape");
      return v;
    }
    uint32_t v = hex_digits(4);
    if (v >= 0xD800 && v <= 0xDBFF && i_ + 1 < s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
      const size_t save = i_;
      i_ += 2;
      const uint32_t lo = hex_digits(4);
      if (lo >= 0xDC00 && lo <= 0xDFFF) return 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
      i_ = save;
    }
    if (v >= 0xD800 && v <= 0xDFFF) fail("escape", "a lone surrogate escape");
    return v;
  }

  // After a backslash: a set (\d ...) or a single character, put into `set`. True for a set.
  bool escape(CharSet& set, bool in_class) {
    if (at_end()) fail("escape", "a trailing backslash");
    const char c = s_[i_++];
    switch (c) {
      case 'd': set = digits(); return true;
      case 'D': set = digits().complement(); return true;
      case 'w': set = word(); return true;
      case 'W': set = word().complement(); return true;
      case 's': set = space(); return true;
      case 'S': set = space().complement(); return true;
      case 't': set = CharSet::single('\t'); return false;
      case 'n': set = CharSet::single('\n'); return false;
      case 'r': set = CharSet::single('\r'); return false;
      case 'f': set = CharSet::single('\f'); return false;
      case 'v': set = CharSet::single('\v'); return false;
      case 'x': set = CharSet::single(hex_digits(2)); return false;
      case 'u': set = CharSet::single(unicode_escape()); return false;
      case 'c':
        if (at_end() || !((peek() >= 'a' && peek() <= 'z') || (peek() >= 'A' && peek() <= 'Z'))) fail("escape", "bad \\c escape");
        set = CharSet::single(static_cast<uint32_t>(s_[i_++]) % 32);
        return false;
      case '0':
        if (!at_end() && peek() >= '0' && peek() <= '9') fail("backreference", "octal escapes and backreferences are not supported");
        set = CharSet::single(0);
        return false;
      case 'b':
        if (in_class) return set = CharSet::single(8), false;
        fail("word boundary", "\\b (word boundary) is not supported");
      case 'B': fail("word boundary", "\\B is not supported");
      case 'p':
      case 'P': fail("unicode property", "Unicode property escapes (\\p{...}) are not supported");
      case 'k': fail("backreference", "named backreferences are not supported");
      default: break;
    }
    if (c >= '1' && c <= '9') fail("backreference", "backreferences are not supported");
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) fail("escape", std::string("unknown escape \\") + c);
    --i_;
    set = CharSet::single(code_point());
    return false;
  }

  uint32_t class_char(CharSet& set, bool& is_set) {
    is_set = false;
    if (eat('\\')) {
      is_set = escape(set, true);
      return is_set ? 0 : set.ranges()[0].lo;
    }
    return code_point();
  }

  CharSet char_class() {
    const bool negated = eat('^');
    CharSet out;
    while (!at_end() && peek() != ']') {
      CharSet a_set;
      bool a_is_set;
      const uint32_t a = class_char(a_set, a_is_set);
      if (a_is_set) {
        out.add(a_set);
        continue;
      }
      if (!at_end() && peek() == '-' && i_ + 1 < s_.size() && s_[i_ + 1] != ']') {
        ++i_;
        CharSet b_set;
        bool b_is_set;
        const uint32_t b = class_char(b_set, b_is_set);
        if (b_is_set) fail("class", "a range ending in a class escape");
        if (b < a) fail("class", "a range out of order");
        out.add(a, b);
      } else {
        out.add(a, a);
      }
    }
    if (!eat(']')) fail("class", "missing ']'");
    return negated ? out.complement() : out;
  }

  std::string_view s_;
  std::string where_;
  size_t i_ = 0;
};

const CharSet& json_specials() {
  static const CharSet s = [] {
    CharSet x = CharSet::range(0, 0x1F);
    x.add('"', '"');
    x.add('\\', '\\');
    return x;
  }();
  return s;
}

}  // namespace

ExprPtr parse_regex(std::string_view pattern, RegexMode mode, const std::string& where) {
  return Parser(pattern, where).top(mode);
}

std::string json_escape_char(uint32_t c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
  }
  if (c < 0x20) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", c);
    return buf;
  }
  return utf8_encode(c);
}

ExprPtr json_string_content(const ExprPtr& e) {
  switch (e->kind) {
    case Expr::Kind::Empty:
    case Expr::Kind::Nothing: return e;
    case Expr::Kind::Literal: {
      std::string out;
      for (size_t i = 0; i < e->bytes.size();) out += json_escape_char(utf8_next(e->bytes, i));
      return lit(out);
    }
    case Expr::Kind::Chars: {
      std::vector<ExprPtr> alts{chars(e->chars.minus(json_specials()))};
      const CharSet escaped = e->chars.minus(json_specials().complement());
      for (const CodeRange& r : escaped.ranges())
        for (uint32_t c = r.lo; c <= r.hi; ++c) alts.push_back(lit(json_escape_char(c)));
      return alt(std::move(alts));
    }
    case Expr::Kind::Seq:
    case Expr::Kind::Alt: {
      std::vector<ExprPtr> items;
      for (const ExprPtr& i : e->items) items.push_back(json_string_content(i));
      return e->kind == Expr::Kind::Seq ? seq(std::move(items)) : alt(std::move(items));
    }
    case Expr::Kind::Repeat: return repeat(json_string_content(e->items[0]), e->min, e->max);
    case Expr::Kind::And: return both(json_string_content(e->items[0]), json_string_content(e->items[1]));
    case Expr::Kind::Diff: return minus(json_string_content(e->items[0]), json_string_content(e->items[1]));
    case Expr::Kind::Ref:
    case Expr::Kind::Graph: break;
  }
  throw std::logic_error("json_string_content: an expression over characters only");
}

}  // namespace exspec::grammar
