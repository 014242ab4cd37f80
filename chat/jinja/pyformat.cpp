#include "chat/jinja/pyformat.h"

#include <cmath>
#include <cstring>
#include <cstdio>
#include <stdexcept>

#include "chat/jinja/pystr.h"

namespace exspec::jinja {
namespace {

struct Spec {
  std::string fill = " ";
  char align = 0;  // < > ^ =
  char sign = '-';
  bool alt = false, zero = false;
  int64_t width = -1, precision = -1;
  char grouping = 0;  // , or _
  char type = 0;
};

[[noreturn]] void bad(const std::string& what) { throw std::runtime_error(what); }

bool is_align(char c) { return c == '<' || c == '>' || c == '^' || c == '='; }

int64_t digits(const std::string& s, size_t& i) {
  int64_t n = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) n = n * 10 + (s[i++] - '0');
  return n;
}

Spec parse_spec(const std::string& s) {
  Spec p;
  size_t i = 0;
  const std::u32string u = pystr::decode(s);
  if (u.size() >= 2 && u[1] < 0x80 && is_align(char(u[1]))) {  // a fill code point, then the align
    p.fill = pystr::encode(u.substr(0, 1));
    p.align = char(u[1]);
    i = pystr::encode(u.substr(0, 2)).size();
  } else if (!s.empty() && is_align(s[0])) {
    p.align = s[i++];
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) p.sign = s[i++];
  if (i < s.size() && s[i] == '#') p.alt = (++i, true);
  if (i < s.size() && s[i] == '0') p.zero = (++i, true);
  if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) p.width = digits(s, i);
  if (i < s.size() && (s[i] == ',' || s[i] == '_')) p.grouping = s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) bad("Format specifier missing precision");
    p.precision = digits(s, i);
  }
  if (i < s.size()) p.type = s[i++];
  if (i < s.size()) bad("Invalid format specifier '" + s + "'");
  return p;
}

std::string group(const std::string& int_digits, char sep, int every) {
  std::string out;
  const int n = int(int_digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % every == 0) out.push_back(sep);
    out.push_back(int_digits[size_t(i)]);
  }
  return out;
}

// Pads `body` (its sign apart, for '=') to the width.
std::string pad(const Spec& p, const std::string& sign, const std::string& body, char dflt_align) {
  const char align = p.align ? p.align : p.zero ? '=' : dflt_align;
  const std::string fill = !p.align && p.zero ? "0" : p.fill;
  const int64_t n = int64_t(pystr::length(sign) + pystr::length(body));
  const int64_t w = p.width > n ? p.width - n : 0;
  auto fills = [&](int64_t k) {
    std::string o;
    for (int64_t i = 0; i < k; ++i) o += fill;
    return o;
  };
  switch (align) {
    case '<': return sign + body + fills(w);
    case '^': return fills(w / 2) + sign + body + fills(w - w / 2);
    case '=': return sign + fills(w) + body;
    default: return fills(w) + sign + body;
  }
}

std::string sign_of(const Spec& p, bool negative) {
  if (negative) return "-";
  return p.sign == '+' ? "+" : p.sign == ' ' ? " " : "";
}

std::string format_int(int64_t v, const Spec& p) {
  const uint64_t mag = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  std::string body, prefix;
  switch (p.type) {
    case 0: case 'd': case 'n': body = std::to_string(mag); break;
    case 'x': case 'X': case 'o': case 'b': {
      const int base = p.type == 'o' ? 8 : p.type == 'b' ? 2 : 16;
      const char* dig = p.type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
      uint64_t m = mag;
      do {
        body.insert(body.begin(), dig[m % uint64_t(base)]);
        m /= uint64_t(base);
      } while (m);
      if (p.alt) prefix = std::string("0") + p.type;
      break;
    }
    case 'c': {
      if (v < 0 || v > 0x10FFFF) bad("%c arg not in range(0x110000)");
      std::string c;
      pystr::append_utf8(c, char32_t(v));
      return pad(p, "", c, '<');
    }
    default: bad(std::string("Unknown format code '") + p.type + "' for object of type 'int'");
  }
  if (p.precision >= 0) bad("Precision not allowed in integer format specifier");
  if (p.grouping) body = group(body, p.grouping, p.type == 0 || p.type == 'd' || p.type == 'n' ? 3 : 4);
  return pad(p, sign_of(p, v < 0) + prefix, body, '>');
}

// Python's 'r'-like default float format with a precision: %g that keeps ".0" and turns
// scientific from exponent p - 1 on.
std::string float_general(double m, int64_t prec, bool keep_point) {
  const int p = int(prec == 0 ? 1 : prec);
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*e", p - 1, m);
  const int exp = std::atoi(std::strchr(buf, 'e') + 1);
  const bool sci = exp < -4 || exp >= (keep_point ? p - 1 : p);
  std::string s;
  if (sci) {
    std::string mant(buf, std::strchr(buf, 'e'));
    if (mant.find('.') != std::string::npos) {
      while (mant.back() == '0') mant.pop_back();
      if (mant.back() == '.') mant.pop_back();
    }
    std::snprintf(buf, sizeof buf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    s = mant + buf;
  } else {
    std::snprintf(buf, sizeof buf, "%.*f", std::max(0, p - 1 - exp), m);
    s = buf;
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
    }
    if (keep_point && s.find('.') == std::string::npos) s += ".0";
  }
  return s;
}

std::string format_float(double v, const Spec& p) {
  const bool neg = std::signbit(v) && !std::isnan(v);
  const double m = std::fabs(v);
  std::string body;
  const int64_t prec = p.precision >= 0 ? p.precision : 6;
  char buf[512];
  if (std::isinf(m) || std::isnan(m)) {
    body = std::isnan(m) ? "nan" : "inf";
    if (p.type && std::isupper(static_cast<unsigned char>(p.type))) body = pystr::upper(body);
  } else {
    switch (p.type) {
      case 0:
        body = p.precision < 0 ? float_repr(m) : float_general(m, p.precision, true);
        break;
      case 'f': case 'F': case '%':
        std::snprintf(buf, sizeof buf, "%.*f", int(prec), p.type == '%' ? m * 100 : m);
        body = buf;
        break;
      case 'e': case 'E':
        std::snprintf(buf, sizeof buf, p.type == 'e' ? "%.*e" : "%.*E", int(prec), m);
        body = buf;
        break;
      case 'g': case 'G':
        body = float_general(m, prec, false);
        if (p.type == 'G') body = pystr::upper(body);
        break;
      default: bad(std::string("Unknown format code '") + p.type + "' for object of type 'float'");
    }
  }
  if (p.grouping) {
    const size_t end = body.find_first_not_of("0123456789");
    body = group(body.substr(0, end), p.grouping, 3) + (end == std::string::npos ? "" : body.substr(end));
  }
  if (p.type == '%') body += "%";
  return pad(p, sign_of(p, neg), body, '>');
}

// One %-conversion of v, its flags, width and precision in p.
std::string percent_one(char c, const Value& v, Spec p) {
  if (c == 's' || c == 'r' || c == 'a') {
    std::string s = c == 's' ? to_str(v) : repr(v);
    if (p.precision >= 0) s = pystr::slice(s, 0, p.precision, 1);
    p.zero = false;
    return pad(p, "", s, '>');
  }
  if (!v.is_number()) bad(std::string("%") + c + " format: a real number is required, not " + v.type_name());
  if (c == 'd' || c == 'i' || c == 'u') {
    const int64_t n = v.is_float() ? int64_t(std::trunc(v.as_number())) : v.as_int();
    std::string digits_s = std::to_string(n < 0 ? -n : n);
    if (p.precision > int64_t(digits_s.size())) digits_s.insert(0, size_t(p.precision) - digits_s.size(), '0');
    return pad(p, sign_of(p, n < 0), digits_s, '>');
  }
  p.type = c;
  if (std::strchr("xXo", c)) {
    if (v.is_float()) bad(std::string("%") + c + " format: an integer is required, not float");
    p.precision = -1;
    return format_int(v.as_int(), p);
  }
  if (std::strchr("feEgGF", c)) return format_float(v.as_number(), p);
  bad(std::string("unsupported format character '") + c + "'");
}

}  // namespace

std::string format_value(const Value& v, const std::string& spec) {
  if (spec.empty()) return to_str(v);
  if (v.is_int() || v.is_bool() || v.is_float()) {
    const Spec p = parse_spec(spec);
    const bool as_float = v.is_float() || p.type == 'e' || p.type == 'E' || p.type == 'f' || p.type == 'F' ||
                          p.type == 'g' || p.type == 'G' || p.type == '%';
    return as_float ? format_float(v.as_number(), p) : format_int(v.as_int(), p);
  }
  if (v.is_string()) {
    const Spec p = parse_spec(spec);
    if (p.type && p.type != 's') bad(std::string("Unknown format code '") + p.type + "' for object of type 'str'");
    if (p.sign != '-') bad("Sign not allowed in string format specifier");
    if (p.alt) bad("Alternate form (#) not allowed in string format specifier");
    if (p.align == '=') bad("'=' alignment not allowed in string format specifier");
    if (p.grouping) bad(std::string("Cannot specify '") + p.grouping + "' with 's'.");
    const std::string s = p.precision >= 0 ? pystr::slice(v.str(), 0, p.precision, 1) : v.str();
    return pad(p, "", s, '<');
  }
  bad(std::string("unsupported format string passed to ") + v.type_name() + ".__format__");
}

namespace {

// The value a field name reaches: "0", "name", then ".attr" and "[key]" parts (the sandbox's
// getattr: a dict's item, a list's index).
Value field_value(const std::string& field, const Args& a, size_t& auto_index, int& numbering) {
  const size_t end = field.find_first_of(".[");
  const std::string head = field.substr(0, end);
  Value v;
  if (head.empty() || std::isdigit(static_cast<unsigned char>(head[0]))) {
    const int mode = head.empty() ? 1 : 2;
    if (numbering && numbering != mode)
      bad("cannot switch from manual field specification to automatic field numbering");  // CPython's words, both ways
    numbering = mode;
    const size_t i = head.empty() ? auto_index++ : std::stoul(head);
    if (i >= a.pos.size()) bad("Replacement index " + std::to_string(i) + " out of range for positional args tuple");
    v = a.pos[i];
  } else {
    const Value* k = nullptr;
    for (const auto& [n, x] : a.kw)
      if (n == head) k = &x;
    if (!k) bad("'" + head + "'");
    v = *k;
  }
  size_t i = end;
  while (i != std::string::npos && i < field.size()) {
    const bool item = field[i] == '[';
    const size_t stop = item ? field.find(']', i) : field.find_first_of(".[", i + 1);
    if (item && stop == std::string::npos) bad("Missing ']' in format string");
    const std::string key = field.substr(i + 1, (stop == std::string::npos ? field.size() : stop) - i - 1);
    const bool index = item && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
    if (v.is_object() && v.object().find(key) && (item || !v.object().is_namespace)) v = *v.object().find(key);
    else if (index && v.is_array() && std::stoul(key) < v.array().size()) v = v.array()[std::stoul(key)];
    else bad("'" + std::string(v.type_name()) + "' object has no " + (item ? "item " : "attribute ") + "'" + key + "'");
    i = item ? stop + 1 : stop;
  }
  return v;
}

}  // namespace

std::string str_format(const std::string& f, const Args& a) {
  std::string out;
  size_t auto_index = 0;
  int numbering = 0;  // 1 automatic, 2 manual
  for (size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if ((c == '{' || c == '}') && i + 1 < f.size() && f[i + 1] == c) {
      out.push_back(c);
      ++i;
      continue;
    }
    if (c == '}') bad("Single '}' encountered in format string");
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    size_t close = i + 1;  // the matching '}', over nested fields in the spec
    for (int depth = 1; close < f.size(); ++close) {
      if (f[close] == '{') ++depth;
      if (f[close] == '}' && --depth == 0) break;
    }
    if (close >= f.size()) bad("expected '}' before end of string");
    std::string field = f.substr(i + 1, close - i - 1), spec, conv;
    if (const size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field.resize(colon);
    }
    if (const size_t bang = field.find('!'); bang != std::string::npos) {
      conv = field.substr(bang + 1);
      field.resize(bang);
      if (conv != "r" && conv != "s" && conv != "a") bad("Unknown conversion specifier " + conv);
    }
    Value v = field_value(field, a, auto_index, numbering);
    if (conv == "r" || conv == "a") v = Value(repr(v));
    else if (conv == "s") v = Value(to_str(v));
    if (spec.find('{') != std::string::npos) spec = str_format(spec, a);
    out += format_value(v, spec);
    i = close;
  }
  return out;
}

// "%[(name)][flags][width][.precision]type" with flags - + space # 0.
std::string percent_format(const std::string& fmt, const Value& args) {
  const bool spread = args.is_array() && args.is_tuple();
  const Array list = spread ? args.array() : Array{args};
  std::string out;
  size_t k = 0;
  bool by_name = false;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i]);
      continue;
    }
    if (++i >= fmt.size()) bad("incomplete format");
    if (fmt[i] == '%') {
      out.push_back('%');
      continue;
    }
    const Value* v = nullptr;
    if (fmt[i] == '(') {
      const size_t close = fmt.find(')', i);
      if (close == std::string::npos) bad("incomplete format key");
      if (!args.is_object()) bad("format requires a mapping");
      v = args.object().find(fmt.substr(i + 1, close - i - 1));
      if (!v) bad("'" + fmt.substr(i + 1, close - i - 1) + "'");
      by_name = true;
      i = close + 1;
    }
    Spec p;
    for (; i < fmt.size() && std::strchr("-+ #0", fmt[i]); ++i) {
      if (fmt[i] == '-') p.align = '<';
      else if (fmt[i] == '+' || fmt[i] == ' ') p.sign = p.sign == '+' ? '+' : fmt[i];
      else if (fmt[i] == '#') p.alt = true;
      else p.zero = true;
    }
    if (p.align == '<') p.zero = false;
    if (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) p.width = digits(fmt, i);
    if (i < fmt.size() && fmt[i] == '.') p.precision = (++i, digits(fmt, i));
    if (i >= fmt.size()) bad("incomplete format");
    const char c = fmt[i];
    if (!v) {
      if (k >= list.size()) bad("not enough arguments for format string");
      v = &list[k++];
    }
    out += percent_one(c, *v, p);
  }
  if (!by_name && spread && k < list.size()) bad("not all arguments converted during string formatting");
  // Python lets a lone mapping or list go unused (it has __getitem__), not a str or a number.
  if (!by_name && !spread && k == 0 && !args.is_object() && !args.is_array() && !args.is_undefined()) bad("not all arguments converted during string formatting");
  return out;
}

}  // namespace exspec::jinja
