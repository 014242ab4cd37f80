#include "chat/jinja/pystr.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace exspec::jinja::pystr {

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = s[i];
    const int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    bool ok = n >= 0 && i + n < s.size();
    char32_t cp = n > 0 ? (c & (0x3F >> n)) : c;
    for (int k = 1; ok && k <= n; ++k) {
      const unsigned char d = s[i + k];
      ok = (d >> 6) == 2;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += n + 1;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(char(c));
  } else if (c < 0x800) {
    out.push_back(char(0xC0 | (c >> 6)));
    out.push_back(char(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(char(0xE0 | (c >> 12)));
    out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(char(0x80 | (c & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (c >> 18)));
    out.push_back(char(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(char(0x80 | (c & 0x3F)));
  }
}

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

size_t length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_space(char32_t c) {
  return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
  const std::u32string u = decode(s);
  const std::u32string set = chars ? decode(*chars) : std::u32string();
  auto drop = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : is_space(c); };
  size_t b = 0, e = u.size();
  if (left)
    while (b < e && drop(u[b])) ++b;
  if (right)
    while (e > b && drop(u[e - 1])) --e;
  return encode(std::u32string_view(u).substr(b, e - b));
}

namespace {

std::vector<std::string> split_space(std::string_view s, int64_t maxsplit, bool from_right) {
  std::u32string u = decode(s);
  if (from_right) std::reverse(u.begin(), u.end());
  std::vector<std::u32string> parts;
  size_t i = 0;
  while (i < u.size()) {
    while (i < u.size() && is_space(u[i])) ++i;
    if (i == u.size()) break;
    if (maxsplit >= 0 && int64_t(parts.size()) == maxsplit) {  // the rest, its far end as it is
      parts.push_back(u.substr(i));
      break;
    }
    size_t j = i;
    while (j < u.size() && !is_space(u[j])) ++j;
    parts.push_back(u.substr(i, j - i));
    i = j;
  }
  std::vector<std::string> out;
  for (auto& p : parts) {
    if (from_right) std::reverse(p.begin(), p.end());
    out.push_back(encode(p));
  }
  if (from_right) std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit,
                               bool from_right) {
  if (!sep) return split_space(s, maxsplit, from_right);
  if (sep->empty()) throw std::invalid_argument("empty separator");
  std::vector<std::string> out;
  if (!from_right) {
    size_t at = 0;
    while (maxsplit < 0 || int64_t(out.size()) < maxsplit) {
      const size_t f = s.find(*sep, at);
      if (f == std::string_view::npos) break;
      out.emplace_back(s.substr(at, f - at));
      at = f + sep->size();
    }
    out.emplace_back(s.substr(at));
    return out;
  }
  size_t end = s.size();
  std::vector<std::string> rev;
  while (maxsplit < 0 || int64_t(rev.size()) < maxsplit) {
    if (end < sep->size()) break;
    const size_t f = s.rfind(*sep, end - sep->size());
    if (f == std::string_view::npos) break;
    rev.emplace_back(s.substr(f + sep->size(), end - f - sep->size()));
    end = f;
  }
  rev.emplace_back(s.substr(0, end));
  return std::vector<std::string>(rev.rbegin(), rev.rend());
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  const std::u32string u = decode(s);
  auto is_break = [](char32_t c) {
    return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 ||
           c == 0x2029;
  };
  std::vector<std::string> out;
  size_t i = 0;
  while (i < u.size()) {
    size_t j = i;
    while (j < u.size() && !is_break(u[j])) ++j;
    size_t end = j;
    if (j < u.size()) end = j + (u[j] == '\r' && j + 1 < u.size() && u[j + 1] == '\n' ? 2 : 1);
    out.push_back(encode(std::u32string_view(u).substr(i, (keepends ? end : j) - i)));
    i = end;
  }
  return out;
}

std::string replace(std::string_view s, std::string_view old, std::string_view with, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts `with` around every code point
    const std::u32string u = decode(s);
    int64_t n = 0;
    for (size_t i = 0; i <= u.size(); ++i) {
      if (count < 0 || n < count) {
        out += with;
        ++n;
      }
      if (i < u.size()) append_utf8(out, u[i]);
    }
    return out;
  }
  size_t at = 0;
  int64_t n = 0;
  while (count < 0 || n < count) {
    const size_t f = s.find(old, at);
    if (f == std::string_view::npos) break;
    out.append(s.substr(at, f - at));
    out.append(with);
    at = f + old.size();
    ++n;
  }
  out.append(s.substr(at));
  return out;
}

std::vector<int64_t> slice_indices(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  if (step == 0) throw std::invalid_argument("slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return std::clamp(x, lo, hi);
  };
  std::vector<int64_t> out;
  if (step > 0) {
    const int64_t b = clamp(start, 0, 0, n), e = clamp(stop, n, 0, n);
    for (int64_t i = b; i < e; i += step) out.push_back(i);
  } else {
    const int64_t b = clamp(start, n - 1, -1, n - 1), e = clamp(stop, -1, -1, n - 1);
    for (int64_t i = b; i > e; i += step) out.push_back(i);
  }
  return out;
}

std::string slice(std::string_view s, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  const std::u32string u = decode(s);
  std::u32string out;
  for (int64_t i : slice_indices(int64_t(u.size()), start, stop, step)) out.push_back(u[size_t(i)]);
  return encode(out);
}

std::string quote(std::string_view s) {
  const bool dq = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == q) out += std::string("\\") + char(q);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(char(c));
    }
  }
  out.push_back(q);
  return out;
}

std::string json_quote(std::string_view s, bool ensure_ascii) {
  std::string out = "\"";
  auto hex = [&](unsigned v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", v);
    out += buf;
  };
  for (char32_t c : decode(s)) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) hex(unsigned(c));
        else if (ensure_ascii && c > 0x7E) {
          if (c >= 0x10000) {
            const char32_t v = c - 0x10000;
            hex(0xD800 | unsigned(v >> 10));
            hex(0xDC00 | unsigned(v & 0x3FF));
          } else {
            hex(unsigned(c));
          }
        } else append_utf8(out, c);
    }
  }
  out += "\"";
  return out;
}

}  // namespace exspec::jinja::pystr
