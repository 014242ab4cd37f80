#include "grammar/gbnf.h"

#include <map>
#include <string>

#include "grammar/budget.h"
#include "grammar/error.h"
#include "grammar/thompson.h"

namespace exspec::grammar {
namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Grammar parse() {
    for (;;) {
      skip(true);
      if (at_end()) break;
      rule();
    }
    for (const auto& [name, index] : ids_)
      if (!g_.rules[static_cast<size_t>(index)].body)
        throw GrammarError(name, "rule " + name, "GBNF: rule '" + name + "' is used but never defined");
    auto root = ids_.find("root");
    if (root == ids_.end()) throw GrammarError("root", "", "GBNF: the grammar has no 'root' rule");
    g_.root = root->second;
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail(const std::string& construct, const std::string& msg) const {
    size_t line = 1, col = 1;
    for (size_t k = 0; k < i_ && k < s_.size(); ++k) {
      if (s_[k] == '\n') ++line, col = 1;
      else ++col;
    }
    throw GrammarError(construct, "line " + std::to_string(line) + ", column " + std::to_string(col), "GBNF: " + msg);
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  bool eat(char c) {
    if (peek() == c && !at_end()) return ++i_, true;
    return false;
  }
  // Spaces, tabs, comments; newlines too when `newlines`.
  void skip(bool newlines) {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) ++i_;
      else if (c == '#')
        while (!at_end() && peek() != '\n') ++i_;
      else break;
    }
  }
  // A newline whose next line goes on with '|' continues the rule.
  bool continues_on_next_line() {
    size_t k = i_;
    while (k < s_.size() && (s_[k] == ' ' || s_[k] == '\t' || s_[k] == '\r' || s_[k] == '\n')) ++k;
    return k < s_.size() && s_[k] == '|' && s_.substr(i_, k - i_).find('\n') != std::string_view::npos;
  }

  std::string name() {
    const size_t start = i_;
    while (!at_end() && name_char(peek())) ++i_;
    if (i_ == start) fail("syntax", "expected a rule name");
    return std::string(s_.substr(start, i_ - start));
  }
  int rule_id(const std::string& n) {
    auto it = ids_.find(n);
    if (it != ids_.end()) return it->second;
    const int id = g_.add(n);
    ids_.emplace(n, id);
    return id;
  }

  void rule() {
    const std::string n = name();
    skip(false);
    if (!(eat(':') && eat(':') && eat('='))) fail("syntax", "expected '::=' after rule name '" + n + "'");
    skip(true);
    const int id = rule_id(n);
    if (g_.rules[static_cast<size_t>(id)].body) fail("syntax", "rule '" + n + "' is defined twice");
    g_.rules[static_cast<size_t>(id)].body = alternatives(false);
    skip(false);
    if (!at_end() && !eat('\n')) fail("syntax", std::string("unexpected '") + peek() + "'");
  }

  ExprPtr alternatives(bool nested) {
    std::vector<ExprPtr> alts{sequence(nested)};
    for (;;) {
      if (!nested && continues_on_next_line()) skip(true);
      if (!eat('|')) break;
      skip(true);
      alts.push_back(sequence(nested));
    }
    return alt(std::move(alts));
  }

  ExprPtr sequence(bool nested) {
    std::vector<ExprPtr> items;
    for (;;) {
      skip(nested);
      const char c = peek();
      if (at_end() || c == '|' || c == ')' || c == '\n') break;
      items.push_back(repetition(primary(nested)));
    }
    return seq(std::move(items));
  }

  int count() {
    long v = 0;
    const size_t start = i_;
    while (peek() >= '0' && peek() <= '9' && !at_end()) {
      v = v * 10 + (s_[i_++] - '0');
      if (v > 100000) fail("repetition", "a repetition count above 100000");
    }
    if (i_ == start) fail("repetition", "expected a number");
    return static_cast<int>(v);
  }

  ExprPtr repetition(ExprPtr e) {
    for (;;) {
      if (eat('*')) e = star(e);
      else if (eat('+')) e = plus(e);
      else if (eat('?')) e = opt(e);
      else if (eat('{')) {
        skip(true);
        const int lo = count();
        int hi = lo;
        skip(true);
        if (eat(',')) {
          skip(true);
          hi = peek() == '}' ? -1 : count();
          skip(true);
        }
        if (!eat('}')) fail("repetition", "expected '}'");
        if (hi >= 0 && hi < lo) fail("repetition", "{m,n} with n < m");
        e = repeat(e, lo, hi);
        constexpr size_t kLimit = 4 * kMaxRuleStates;  // checked before anything is built
        if (const size_t states = nfa_states_at_least(*e, kLimit + 1); states > kLimit)
          fail("repetition", "a repetition too large: it would need at least " + std::to_string(states) +
                   " automaton states, more than the limit of " + std::to_string(kLimit));
      } else {
        return e;
      }
    }
  }

  uint32_t hex(int n) {
    uint32_t v = 0;
    for (int k = 0; k < n; ++k) {
      const int d = hex_digit(peek());
      if (d < 0 || at_end()) fail("escape", "expected a hexadecimal digit");
      v = v * 16 + static_cast<uint32_t>(d);
      ++i_;
    }
    return v;
  }

  uint32_t character() {
    if (at_end()) fail("syntax", "unexpected end of grammar");
    if (eat('\\')) {
      const char c = s_[i_++];
      switch (c) {
        case 'n': return '\n';
        case 'r': return '\r';
        case 't': return '\t';
        case 'x': return hex(2);
        case 'u': return hex(4);
        case 'U': return hex(8);
        case '\\': case '"': case '\'': case '[': case ']': case '-': case '^': case '/': return static_cast<uint32_t>(c);
        default: fail("escape", std::string("unknown escape \\") + c);
      }
    }
    uint32_t c;
    if (!utf8_at(s_, i_, c)) fail("utf-8", "the grammar is not valid UTF-8");
    return c;
  }

  ExprPtr primary(bool nested) {
    const char c = peek();
    if (eat('"')) {
      std::string bytes;
      while (!at_end() && peek() != '"') {
        const uint32_t ch = character();
        if (ch > kMaxCodePoint || (ch >= 0xD800 && ch <= 0xDFFF)) fail("escape", "not a Unicode scalar value");
        bytes += utf8_encode(ch);
      }
      if (!eat('"')) fail("syntax", "unterminated string");
      return lit(bytes);
    }
    if (eat('[')) {
      const bool negated = eat('^');
      CharSet set;
      while (!at_end() && peek() != ']') {
        const uint32_t lo = character();
        uint32_t hi = lo;
        if (peek() == '-' && i_ + 1 < s_.size() && s_[i_ + 1] != ']') ++i_, hi = character();
        if (hi < lo) fail("class", "a range out of order");
        set.add(lo, hi);
      }
      if (!eat(']')) fail("class", "missing ']'");
      return chars(negated ? set.complement() : set);
    }
    if (eat('.')) return chars(CharSet::any());
    if (eat('(')) {
      skip(true);
      if (peek() == '=') fail("lookahead", "lookahead (= ...) is not supported");
      ExprPtr e = alternatives(true);
      skip(true);
      if (!eat(')')) fail("syntax", "missing ')'");
      return e;
    }
    if (c == '<') fail("token reference", "token references <...> are not supported");
    if (name_char(c)) return ref(rule_id(name()));
    (void)nested;
    fail("syntax", std::string("unexpected '") + c + "'");
  }

  std::string_view s_;
  size_t i_ = 0;
  Grammar g_;
  std::map<std::string, int> ids_;
};

}  // namespace

Grammar parse_gbnf(std::string_view text) { return inline_rules(Parser(text).parse()); }

}  // namespace exspec::grammar
