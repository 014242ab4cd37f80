// The methods of str, dict and list a sandboxed Jinja2 template may call (none that mutate).
#include <algorithm>
#include <set>

#include "chat/jinja/builtins.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/pyformat.h"
#include "chat/jinja/pystr.h"
#include "chat/jinja/signatures.h"

namespace exspec::jinja {
namespace {

const std::set<std::string, std::less<>> kStr{
    "startswith", "endswith", "split", "rsplit", "strip", "lstrip", "rstrip", "upper", "lower", "title", "capitalize",
    "replace", "format", "join", "find", "rfind", "count", "splitlines", "isdigit", "isalpha", "isalnum", "isspace",
    "isupper", "islower", "removeprefix", "removesuffix", "ljust", "rjust", "center", "zfill", "index"};
const std::set<std::string, std::less<>> kDict{"items", "keys", "values", "get"};
const std::set<std::string, std::less<>> kList{"index", "count"};
const std::set<std::string, std::less<>> kLoop{"cycle", "changed"};

std::string s_arg(const Args& a, size_t i, const char* name, const char* method) {
  const Value* v = a.get(i, name);
  if (!v || !v->is_string()) throw std::runtime_error(std::string(method) + "() needs a str argument");
  return v->str();
}

std::optional<std::string> opt_str(const Args& a, size_t i, const char* name) {
  const Value* v = a.get(i, name);
  if (!v || v->is_none()) return std::nullopt;
  return to_str(*v);
}

int64_t int_arg(const Args& a, size_t i, const char* name, int64_t dflt) {
  const Value* v = a.get(i, name);
  return v && !v->is_none() ? v->as_int() : dflt;
}

bool affix(const std::string& s, const Value& p, bool start) {
  if (p.is_array()) {
    for (const auto& x : p.array())
      if (affix(s, x, start)) return true;
    return false;
  }
  if (!p.is_string()) throw std::runtime_error("startswith/endswith needs a str or a tuple of str");
  const std::string& x = p.str();
  if (x.size() > s.size()) return false;
  return start ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
}

Value strings(const std::vector<std::string>& parts) {
  Array out;
  for (const auto& p : parts) out.push_back(Value(p));
  return Value(std::move(out));
}

Value str_method(const std::string& s, const std::string& m, const Args& a) {
  if (m == "startswith" || m == "endswith") {
    const Value* p = a.get(0, "prefix");
    if (!p) throw std::runtime_error(m + "() needs an argument");
    return Value(affix(s, *p, m == "startswith"));
  }
  if (m == "split" || m == "rsplit") return strings(pystr::split(s, opt_str(a, 0, "sep"), int_arg(a, 1, "maxsplit", -1), m == "rsplit"));
  if (m == "strip") return Value(pystr::strip(s, opt_str(a, 0, "chars"), true, true));
  if (m == "lstrip") return Value(pystr::strip(s, opt_str(a, 0, "chars"), true, false));
  if (m == "rstrip") return Value(pystr::strip(s, opt_str(a, 0, "chars"), false, true));
  if (m == "upper") return Value(pystr::upper(s));
  if (m == "lower") return Value(pystr::lower(s));
  if (m == "title") return Value(pystr::title(s));
  if (m == "capitalize") return Value(pystr::capitalize(s));
  if (m == "replace") return Value(pystr::replace(s, s_arg(a, 0, "old", "replace"), s_arg(a, 1, "new", "replace"), int_arg(a, 2, "count", -1)));
  if (m == "format") return Value(str_format(s, a));
  if (m == "join") {
    std::string out;
    const Value* it = a.get(0, "iterable");
    if (!it) throw std::runtime_error("join() needs an iterable");
    bool first = true;
    for (const Value& e : iterate(*it)) {
      if (!e.is_string()) throw std::runtime_error("join(): sequence item is not a str");
      out += (first ? "" : s) + e.str();
      first = false;
    }
    return Value(out);
  }
  if (m == "find" || m == "rfind" || m == "index") {
    const std::string sub = s_arg(a, 0, "sub", m.c_str());
    const size_t at = m == "rfind" ? s.rfind(sub) : s.find(sub);
    if (at == std::string::npos && m == "index") throw std::runtime_error("substring not found");
    return Value(at == std::string::npos ? int64_t(-1) : int64_t(pystr::length(std::string_view(s).substr(0, at))));
  }
  if (m == "count") {
    const std::string sub = s_arg(a, 0, "sub", "count");
    if (sub.empty()) return Value(int64_t(pystr::length(s) + 1));
    int64_t n = 0;
    for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
    return Value(n);
  }
  if (m == "splitlines") return strings(pystr::splitlines(s, a.get(0, "keepends") && a.get(0, "keepends")->truthy()));
  if (m == "removeprefix" || m == "removesuffix") {
    const std::string x = s_arg(a, 0, "affix", m.c_str());
    if (m == "removeprefix" && affix(s, Value(x), true)) return Value(s.substr(x.size()));
    if (m == "removesuffix" && !x.empty() && affix(s, Value(x), false)) return Value(s.substr(0, s.size() - x.size()));
    return Value(s);
  }
  if (m == "ljust" || m == "rjust" || m == "center" || m == "zfill") {
    const int64_t width = int_arg(a, 0, "width", 0), n = int64_t(pystr::length(s));
    const std::string fill = m == "zfill" ? "0" : opt_str(a, 1, "fillchar").value_or(" ");
    if (width <= n) return Value(s);
    auto pad = [&](int64_t k) {
      std::string p;
      for (int64_t i = 0; i < k; ++i) p += fill;
      return p;
    };
    const int64_t w = width - n;
    if (m == "ljust") return Value(s + pad(w));
    if (m == "rjust") return Value(pad(w) + s);
    if (m == "zfill") {  // the zeros go after a sign
      const size_t sign = !s.empty() && (s[0] == '+' || s[0] == '-');
      return Value(s.substr(0, sign) + pad(w) + s.substr(sign));
    }
    const int64_t left = w / 2 + (w & width & 1);  // CPython's center
    return Value(pad(left) + s + pad(w - left));
  }
  if (m == "isdigit") return Value(pystr::isdigit(s));
  if (m == "isalpha") return Value(pystr::isalpha(s));
  if (m == "isalnum") return Value(pystr::isalnum(s));
  if (m == "isspace") {
    const std::u32string u = pystr::decode(s);
    return Value(!u.empty() && std::all_of(u.begin(), u.end(), pystr::is_space));
  }
  if (m == "isupper") return Value(pystr::isupper(s));
  if (m == "islower") return Value(pystr::islower(s));
  throw std::runtime_error("'str' object has no attribute '" + m + "'");
}

Value dict_method(const Object& o, const std::string& m, const Args& a) {
  if (m == "items" || m == "keys" || m == "values") {
    Array out;
    for (const auto& [k, v] : o.items)
      out.push_back(m == "items" ? Value::tuple(Array{Value(k), v}) : m == "keys" ? Value(k) : v);
    return Value(std::move(out));
  }
  if (m == "get") {
    const Value* k = a.get(0, "key");
    if (!k) throw std::runtime_error("get() needs a key");
    const Value* v = k->is_string() ? o.find(k->str()) : nullptr;
    if (v) return *v;
    const Value* d = a.get(1, "default");
    return d ? *d : Value::none();
  }
  throw std::runtime_error("'dict' object has no attribute '" + m + "'");
}

Value list_method(const Array& l, const std::string& m, const Args& a) {
  const Value* x = a.get(0, "value");
  if (!x) throw std::runtime_error(m + "() needs an argument");
  int64_t n = 0;
  for (size_t i = 0; i < l.size(); ++i) {
    if (!equal(l[i], *x)) continue;
    if (m == "index") return Value(int64_t(i));
    ++n;
  }
  if (m == "index") throw std::runtime_error(repr(*x) + " is not in list");
  return Value(n);
}

}  // namespace

bool is_dict_method(std::string_view name) { return kDict.count(name) > 0; }

bool is_method(std::string_view name) {
  return kStr.count(name) || kDict.count(name) || kList.count(name) || kLoop.count(name);
}

Value call_method(const Value& v, const std::string& name, const Args& args) {
  check_signature("method", name, args);
  if (v.is_string() && kStr.count(name)) return str_method(v.str(), name, args);
  if (v.is_object() && kDict.count(name)) return dict_method(v.object(), name, args);
  if (v.is_array() && kList.count(name)) return list_method(v.array(), name, args);
  throw std::runtime_error(std::string("'") + v.type_name() + "' object has no attribute '" + name + "'");
}

Value method_value(const Value& v, const std::string& name) {
  const bool ok = (v.is_string() && kStr.count(name)) || (v.is_object() && kDict.count(name)) ||
                  (v.is_array() && kList.count(name));
  if (!ok) return Value::undefined("'" + std::string(v.type_name()) + " object' has no attribute '" + name + "'");
  return Value::function(name, [v, name](const Args& a) { return call_method(v, name, a); });
}

}  // namespace exspec::jinja
