#include "chat/jinja/lexer.h"

#include <algorithm>
#include <cstring>

#include "chat/jinja/pystr.h"
#include "chat/jinja/value.h"

namespace exspec::jinja {
namespace {

// "\r\n" and "\r" become "\n"; one trailing newline goes (keep_trailing_newline false).
std::string normalize(const std::string& src, bool keep_trailing_newline) {
  std::string out;
  out.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out.push_back(src[i]);
    }
  }
  if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Python's \s over UTF-8: the length of the whitespace run at `at`.
size_t space_run(const std::string& s, size_t at) {
  size_t i = at;
  while (i < s.size()) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      if (!pystr::is_space(c)) break;
      ++i;
      continue;
    }
    const size_t n = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
    const std::u32string u = pystr::decode(std::string_view(s).substr(i, n));
    if (u.size() != 1 || !pystr::is_space(u[0])) break;
    i += n;
  }
  return i - at;
}

std::string rstrip_space(const std::string& s) { return pystr::strip(s, std::nullopt, false, true); }

bool all_space(const std::string& s, size_t from) { return from < s.size() && space_run(s, from) == s.size() - from; }

int lines_in(const std::string& s, size_t b, size_t e) {
  int n = 0;
  for (size_t i = b; i < e && i < s.size(); ++i) n += s[i] == '\n';
  return n;
}

class Lexer {
 public:
  Lexer(const std::string& src, const LexOptions& opt) : s_(normalize(src, opt.keep_trailing_newline)), opt_(opt) {}

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < s_.size()) {
      const size_t open = next_open(pos_);
      if (open == std::string::npos) {
        text(s_.substr(pos_));
        pos_ = s_.size();
        break;
      }
      const char kind = s_[open + 1];  // '{' variable, '%' block, '#' comment
      const char sign = open + 2 < s_.size() && (s_[open + 2] == '-' || s_[open + 2] == '+') ? s_[open + 2] : 0;
      std::string data = s_.substr(pos_, open - pos_);
      if (sign == '-') {
        data = rstrip_space(data);
      } else if (sign != '+' && kind != '{' && opt_.lstrip_blocks) {
        const size_t l = data.rfind('\n') == std::string::npos ? 0 : data.rfind('\n') + 1;
        if ((l > 0 || line_starting) && all_space(data, l)) data.resize(l);
      }
      line_ += lines_in(s_, pos_, open);
      text(data);
      pos_ = open + 2 + (sign ? 1 : 0);
      if (kind == '#') line_starting = comment();
      else if (kind == '%' && raw_ahead()) line_starting = raw(open);
      else line_starting = tag(kind == '%');
    }
    out_.push_back(Token{Token::End, "", line_});
    return std::move(out_);
  }

 private:
  size_t next_open(size_t from) const {
    for (size_t i = s_.find('{', from); i != std::string::npos; i = s_.find('{', i + 1))
      if (i + 1 < s_.size() && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
    return std::string::npos;
  }

  void text(const std::string& data) {
    if (!data.empty()) out_.push_back(Token{Token::Text, data, line_});
  }

  [[noreturn]] void fail(const std::string& what) const { throw TemplateError(what, line_); }

  // After an end marker: "-" strips all whitespace, else trim_blocks drops one newline. Returns
  // whether what the marker matched ends in a newline (the next tag then starts a line).
  bool after_end(size_t end, bool strip, bool trim) {
    pos_ = end;
    size_t consumed = 0;
    if (strip) consumed = space_run(s_, pos_);
    else if (trim && pos_ < s_.size() && s_[pos_] == '\n') consumed = 1;
    line_ += lines_in(s_, pos_, pos_ + consumed);
    pos_ += consumed;
    return pos_ > 0 && s_[pos_ - 1] == '\n';
  }

  bool comment() {
    const size_t close = s_.find("#}", pos_);
    if (close == std::string::npos) fail("unclosed comment ({# without #})");
    line_ += lines_in(s_, pos_, close);
    const bool strip = close > pos_ && s_[close - 1] == '-';
    return after_end(close + 2, strip, opt_.trim_blocks);
  }

  // {% raw %} [-]?: the text up to {% endraw %} stays as written.
  bool raw_ahead() const {
    size_t i = pos_ + space_run(s_, pos_);
    if (s_.compare(i, 3, "raw") != 0) return false;
    i += 3;
    i += space_run(s_, i);
    return s_.compare(i, 2, "%}") == 0 || s_.compare(i, 3, "-%}") == 0;
  }

  bool raw(size_t open) {
    size_t i = pos_ + space_run(s_, pos_) + 3;
    i += space_run(s_, i);
    const bool strip_after = s_[i] == '-';
    after_end(i + (strip_after ? 3 : 2), strip_after, false);
    for (size_t at = s_.find("{%", pos_); at != std::string::npos; at = s_.find("{%", at + 2)) {
      size_t j = at + 2;
      const bool strip_before = j < s_.size() && s_[j] == '-';
      if (j < s_.size() && (s_[j] == '-' || s_[j] == '+')) ++j;
      j += space_run(s_, j);
      if (s_.compare(j, 6, "endraw") != 0) continue;
      j += 6;
      j += space_run(s_, j);
      const bool strip_end = s_.compare(j, 3, "-%}") == 0;
      if (!strip_end && s_.compare(j, 2, "%}") != 0) continue;
      std::string body = s_.substr(pos_, at - pos_);
      if (strip_before) body = rstrip_space(body);
      line_ += lines_in(s_, pos_, at);
      text(body);
      return after_end(j + (strip_end ? 3 : 2), strip_end, opt_.trim_blocks);
    }
    (void)open;
    fail("unclosed {% raw %} (no {% endraw %})");
  }

  // The tokens of one {{ }} or {% %} tag, up to its end marker outside brackets.
  bool tag(bool block) {
    out_.push_back(Token{block ? Token::BlockBegin : Token::VarBegin, "", line_});
    int depth = 0;
    const char close = block ? '%' : '}';
    while (true) {
      const size_t ws = space_run(s_, pos_);
      line_ += lines_in(s_, pos_, pos_ + ws);
      pos_ += ws;
      if (pos_ >= s_.size()) fail(block ? "unclosed block tag ({% without %})" : "unclosed expression ({{ without }})");
      if (depth == 0) {
        if (s_[pos_] == '-' && pos_ + 2 < s_.size() && s_[pos_ + 1] == close && s_[pos_ + 2] == '}') {
          out_.push_back(Token{block ? Token::BlockEnd : Token::VarEnd, "", line_});
          return after_end(pos_ + 3, true, false);
        }
        if (block && s_[pos_] == '+' && s_.compare(pos_ + 1, 2, "%}") == 0) {
          out_.push_back(Token{Token::BlockEnd, "", line_});
          return after_end(pos_ + 3, false, false);
        }
        if (s_[pos_] == close && pos_ + 1 < s_.size() && s_[pos_ + 1] == '}') {
          out_.push_back(Token{block ? Token::BlockEnd : Token::VarEnd, "", line_});
          return after_end(pos_ + 2, false, block && opt_.trim_blocks);
        }
      }
      depth += token();
      if (depth < 0) depth = 0;
    }
  }

  // One token inside a tag; returns +1 / -1 for an opening / closing bracket.
  int token() {
    const char c = s_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t e = pos_;
      while (e < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_')) ++e;
      out_.push_back(Token{Token::Name, s_.substr(pos_, e - pos_), line_});
      pos_ = e;
      return 0;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return number();
    if (c == '\'' || c == '"') return string(c);
    static const char* const ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "/", "*", "%", "~", "[", "]",
                                      "(", ")", "{", "}", "<", ">", "=", ".", ":", "|", ",", ";"};
    for (const char* op : ops)
      if (s_.compare(pos_, std::strlen(op), op) == 0) {
        out_.push_back(Token{Token::Op, op, line_});
        pos_ += std::strlen(op);
        return (c == '(' || c == '[' || c == '{') ? 1 : (c == ')' || c == ']' || c == '}') ? -1 : 0;
      }
    fail(std::string("unexpected character '") + c + "'");
  }

  int number() {
    if (based_int()) return 0;
    size_t e = pos_;
    auto digits = [&] {
      while (e < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[e])) || s_[e] == '_')) ++e;
    };
    digits();
    bool is_float = false;
    if (e + 1 < s_.size() && s_[e] == '.' && std::isdigit(static_cast<unsigned char>(s_[e + 1]))) {
      is_float = true;
      ++e;
      digits();
    }
    if (e < s_.size() && (s_[e] == 'e' || s_[e] == 'E')) {
      size_t f = e + 1;
      if (f < s_.size() && (s_[f] == '+' || s_[f] == '-')) ++f;
      if (f < s_.size() && std::isdigit(static_cast<unsigned char>(s_[f]))) {
        is_float = true;
        e = f;
        digits();
      }
    }
    std::string t = s_.substr(pos_, e - pos_);
    t.erase(std::remove(t.begin(), t.end(), '_'), t.end());
    out_.push_back(Token{is_float ? Token::Float : Token::Int, t, line_});
    pos_ = e;
    return 0;
  }

  // 0x1F, 0o17, 0b101 (Jinja2's integer_re): an Int token in decimal.
  bool based_int() {
    if (s_[pos_] != '0' || pos_ + 2 >= s_.size()) return false;
    const char k = char(std::tolower(static_cast<unsigned char>(s_[pos_ + 1])));
    const int base = k == 'x' ? 16 : k == 'o' ? 8 : k == 'b' ? 2 : 0;
    auto ok = [&](char c) {
      const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                    : std::isxdigit(static_cast<unsigned char>(c)) ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10 : 99;
      return d < base;
    };
    size_t e = pos_ + 2;
    if (!base || !(ok(s_[e]) || (s_[e] == '_' && e + 1 < s_.size() && ok(s_[e + 1])))) return false;
    std::string t;
    for (; e < s_.size() && (ok(s_[e]) || s_[e] == '_'); ++e)
      if (s_[e] != '_') t.push_back(s_[e]);
    try {
      out_.push_back(Token{Token::Int, std::to_string(std::stoll(t, nullptr, base)), line_});
    } catch (const std::exception&) {
      fail("number out of range: " + s_.substr(pos_, e - pos_));
    }
    pos_ = e;
    return true;
  }

  // A string literal, unescaped as Python's unicode-escape reads it.
  int string(char q) {
    std::string v;
    size_t i = pos_ + 1;
    const int start_line = line_;
    while (true) {
      if (i >= s_.size()) {
        line_ = start_line;
        fail("unclosed string literal");
      }
      const char c = s_[i];
      if (c == q) break;
      if (c == '\n') ++line_;
      if (c != '\\') {
        v.push_back(c);
        ++i;
        continue;
      }
      if (i + 1 >= s_.size()) fail("unclosed string literal");
      const char e = s_[i + 1];
      i += 2;
      switch (e) {
        case 'n': v += '\n'; break;
        case 't': v += '\t'; break;
        case 'r': v += '\r'; break;
        case '\\': v += '\\'; break;
        case '\'': v += '\''; break;
        case '"': v += '"'; break;
        case 'a': v += '\a'; break;
        case 'b': v += '\b'; break;
        case 'f': v += '\f'; break;
        case 'v': v += '\v'; break;
        case '0': v += '\0'; break;
        case '\n': ++line_; break;  // a line continuation
        case 'x':
        case 'u':
        case 'U': {
          const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (i + n > s_.size()) fail("truncated \\" + std::string(1, e) + " escape in a string literal");
          pystr::append_utf8(v, char32_t(std::stoul(s_.substr(i, n), nullptr, 16)));
          i += n;
          break;
        }
        default: v += '\\'; v += e;  // Python keeps unknown escapes as written
      }
    }
    out_.push_back(Token{Token::String, v, start_line});
    pos_ = i + 1;
    return 0;
  }

  std::string s_;
  LexOptions opt_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> lex(const std::string& source, const LexOptions& opt) { return Lexer(source, opt).run(); }

}  // namespace exspec::jinja
