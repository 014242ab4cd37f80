// Jinja2's builtin filters (those chat templates use), with Hugging Face's tojson.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "chat/jinja/builtins.h"
#include "chat/jinja/filters_internal.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/pyformat.h"
#include "chat/jinja/pystr.h"
#include "chat/jinja/signatures.h"

namespace exspec::jinja {
namespace filters {

bool flag(const Args& a, size_t i, const char* name, bool dflt) {
  const Value* v = a.get(i, name);
  return v ? v->truthy() : dflt;
}

// environment.getitem for "a.b.0" paths (map, selectattr, sort, join's attribute=).
Value attribute_path(const Value& v, const std::string& path) {
  Value cur = v;
  for (const auto& part : pystr::split(path, std::string("."), -1)) {
    if (cur.is_undefined()) throw std::runtime_error(cur.undefined_why());  // Undefined[...] raises
    if (const Value* f = cur.is_array() ? cur.field(part) : nullptr) {
      cur = *f;
    } else if (cur.is_object()) {
      const Value* x = cur.object().find(part);
      cur = x ? *x : Value::undefined("'dict object' has no attribute '" + part + "'");
    } else if ((cur.is_array() || cur.is_string()) && !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit)) {
      const size_t i = std::stoul(part);  // an integer part indexes a list or a str
      const size_t n = cur.is_array() ? cur.array().size() : pystr::length(cur.str());
      cur = i >= n ? Value::undefined("index out of range")
            : cur.is_array() ? cur.array()[i] : Value(pystr::slice(cur.str(), int64_t(i), int64_t(i) + 1, 1));
    } else {
      return Value::undefined("no attribute '" + part + "'");
    }
  }
  return cur;
}

}  // namespace filters

namespace {

using namespace filters;

std::string text_of(const Value& v) { return to_str(v); }

Args rest(const Args& a, size_t from) {
  Args r;
  for (size_t i = from; i < a.pos.size(); ++i) r.pos.push_back(a.pos[i]);
  r.kw = a.kw;
  return r;
}

Value f_tojson(Interpreter&, const Value& v, const Args& a) {
  const Value* ensure = a.get(0, "ensure_ascii");
  const Value* indent = a.get(1, "indent");
  const Value* seps = a.get(2, "separators");
  const bool has_indent = indent && !indent->is_none();
  std::string item = has_indent ? "," : ", ", key = ": ";
  if (seps && !seps->is_none()) {
    if (!seps->is_array() || seps->array().size() != 2) throw std::runtime_error("tojson: separators must be a pair");
    item = text_of(seps->array()[0]);
    key = text_of(seps->array()[1]);
  }
  return Value(dumps(v, ensure && ensure->truthy(), has_indent ? int(indent->as_int()) : -1, item, key,
                     flag(a, 3, "sort_keys", false)));
}

Value f_length(Interpreter&, const Value& v, const Args&) {
  if (v.is_string()) return Value(int64_t(pystr::length(v.str())));
  if (v.is_array()) return Value(int64_t(v.array().size()));
  if (v.is_object()) return Value(int64_t(v.object().items.size()));
  if (v.is_undefined()) return Value(0);
  throw std::runtime_error(std::string("object of type '") + v.type_name() + "' has no len()");
}

Value f_default(Interpreter&, const Value& v, const Args& a) {
  const Value* d = a.get(0, "default_value");
  if (v.is_undefined() || (flag(a, 1, "boolean", false) && !v.truthy())) return d ? *d : Value("");
  return v;
}

Value f_trim(Interpreter&, const Value& v, const Args& a) {
  const Value* chars = a.get(0, "chars");
  return Value(pystr::strip(text_of(v), chars && !chars->is_none() ? std::optional<std::string>(text_of(*chars)) : std::nullopt, true, true));
}

Value f_upper(Interpreter&, const Value& v, const Args&) { return Value(pystr::upper(text_of(v))); }
Value f_lower(Interpreter&, const Value& v, const Args&) { return Value(pystr::lower(text_of(v))); }
Value f_capitalize(Interpreter&, const Value& v, const Args&) { return Value(pystr::capitalize(text_of(v))); }
Value f_string(Interpreter&, const Value& v, const Args&) { return Value(text_of(v)); }
Value f_safe(Interpreter&, const Value& v, const Args&) { return v; }

Value f_escape(Interpreter&, const Value& v, const Args&) {
  std::string out;
  for (char c : text_of(v)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return Value(out);
}

Value f_replace(Interpreter&, const Value& v, const Args& a) {
  const Value* old = a.get(0, "old");
  const Value* with = a.get(1, "new");
  const Value* count = a.get(2, "count");
  if (!old || !with) throw std::runtime_error("replace() needs old and new");
  return Value(pystr::replace(text_of(v), text_of(*old), text_of(*with), count && !count->is_none() ? count->as_int() : -1));
}

Value f_list(Interpreter&, const Value& v, const Args&) { return Value(iterate(v)); }

Value f_first(Interpreter&, const Value& v, const Args&) {
  const Array a = iterate(v);
  return a.empty() ? Value::undefined("No first item, sequence was empty.") : a.front();
}

Value f_last(Interpreter&, const Value& v, const Args&) {
  const Array a = iterate(v);
  return a.empty() ? Value::undefined("No last item, sequence was empty.") : a.back();
}

Value f_reverse(Interpreter&, const Value& v, const Args&) {
  if (v.is_string()) return Value(pystr::slice(v.str(), std::nullopt, std::nullopt, -1));
  Array a = iterate(v);
  std::reverse(a.begin(), a.end());
  return Value(std::move(a));
}

Value f_join(Interpreter&, const Value& v, const Args& a) {
  const Value* sep = a.get(0, "d");
  const Value* attr = a.get(1, "attribute");
  std::string out;
  bool first = true;
  for (const Value& e : iterate(v)) {
    if (!first && sep) out += text_of(*sep);
    out += text_of(attr && !attr->is_none() ? attribute_path(e, text_of(*attr)) : e);
    first = false;
  }
  return Value(out);
}

Value f_items(Interpreter&, const Value& v, const Args&) {
  if (v.is_undefined()) return Value(Array{});
  if (!v.is_object()) throw std::runtime_error("items(): can only be used on a mapping");
  Array out;
  for (const auto& [k, e] : v.object().items) out.push_back(Value::tuple(Array{Value(k), e}));
  return Value(std::move(out));
}

// map, select, reject and their attr forms yield nothing for a false input (Jinja2's `if value:`),
// whatever its type.
Value f_map(Interpreter& in, const Value& v, const Args& a) {
  Array out;
  if (!v.truthy()) return Value(std::move(out));
  const Value* attr = a.get(99, "attribute");
  for (const Value& e : iterate(v)) {
    if (attr) {
      Value x = attribute_path(e, text_of(*attr));
      if (x.is_undefined())
        if (const Value* d = a.get(99, "default")) x = *d;
      out.push_back(x);
    } else {
      if (a.pos.empty()) throw std::runtime_error("map() needs a filter name or attribute=");
      out.push_back(apply_filter(in, text_of(a.pos[0]), e, rest(a, 1)));
    }
  }
  return Value(std::move(out));
}

Value select_impl(Interpreter& in, const Value& v, const Args& a, bool by_attr, bool keep) {
  Array out;
  if (!v.truthy()) return Value(std::move(out));
  const size_t test_at = by_attr ? 1 : 0;
  for (const Value& e : iterate(v)) {
    const Value x = by_attr ? attribute_path(e, a.pos.empty() ? "" : text_of(a.pos[0])) : e;
    const bool ok = a.pos.size() > test_at ? apply_test(in, text_of(a.pos[test_at]), x, rest(a, test_at + 1)) : x.truthy();
    if (ok == keep) out.push_back(e);
  }
  return Value(std::move(out));
}

Value f_select(Interpreter& in, const Value& v, const Args& a) { return select_impl(in, v, a, false, true); }
Value f_reject(Interpreter& in, const Value& v, const Args& a) { return select_impl(in, v, a, false, false); }
Value f_selectattr(Interpreter& in, const Value& v, const Args& a) { return select_impl(in, v, a, true, true); }
Value f_rejectattr(Interpreter& in, const Value& v, const Args& a) { return select_impl(in, v, a, true, false); }

Value f_sum(Interpreter&, const Value& v, const Args& a) {
  const Value* attr = a.get(0, "attribute");
  const Value* start = a.get(1, "start");
  Value total = start ? *start : Value(0);
  for (const Value& e : iterate(v)) total = arithmetic("+", total, attr && !attr->is_none() ? attribute_path(e, text_of(*attr)) : e);
  return total;
}

Value f_int(Interpreter&, const Value& v, const Args& a) {
  const Value* d = a.get(0, "default");
  const Value dflt = d ? *d : Value(0);
  if (v.is_undefined()) throw std::runtime_error(v.undefined_why());  // int(Undefined) raises
  if (v.is_number()) return v.is_float() ? Value(int64_t(std::trunc(v.as_number()))) : Value(v.as_int());
  if (v.is_string()) {
    const std::string s = pystr::strip(v.str(), std::nullopt, true, true);
    const Value* base = a.get(1, "base");
    try {
      size_t used = 0;
      const int64_t i = std::stoll(s, &used, base ? int(base->as_int()) : 10);
      if (used == s.size()) return Value(i);
    } catch (const std::exception&) {
    }
    try {
      size_t used = 0;
      const double x = std::stod(s, &used);
      if (used == s.size()) return Value(int64_t(std::trunc(x)));
    } catch (const std::exception&) {
    }
  }
  return dflt;
}

Value f_float(Interpreter&, const Value& v, const Args& a) {
  const Value* d = a.get(0, "default");
  if (v.is_undefined()) throw std::runtime_error(v.undefined_why());  // float(Undefined) raises
  if (v.is_number()) return Value(v.as_number());
  if (v.is_string()) {
    try {
      size_t used = 0;
      const std::string s = pystr::strip(v.str(), std::nullopt, true, true);
      const double x = std::stod(s, &used);
      if (used == s.size()) return Value(x);
    } catch (const std::exception&) {
    }
  }
  return d ? *d : Value(0.0);
}

Value f_abs(Interpreter&, const Value& v, const Args&) {
  if (!v.is_number()) throw std::runtime_error(std::string("bad operand type for abs(): '") + v.type_name() + "'");
  return v.is_float() ? Value(std::fabs(v.as_number())) : Value(int64_t(std::llabs(v.as_int())));
}

// round(x, n) is correctly rounded, half to even on x's exact binary value: what printf's "%.nf"
// does too. ceil and floor: Python's math.ceil(x * 10**n) is an int, then divided.
Value f_round(Interpreter&, const Value& v, const Args& a) {
  const Value* p = a.get(0, "precision");
  const Value* m = a.get(1, "method");
  const int64_t prec = p ? p->as_int() : 0;
  const std::string method = m ? text_of(*m) : "common";
  if (method != "common" && method != "ceil" && method != "floor")
    throw std::runtime_error("method must be common, ceil or floor");
  if (!v.is_number()) throw std::runtime_error(std::string("type ") + v.type_name() + " doesn't define __round__ method");
  if (method == "common") {
    if (!v.is_float()) {  // round(int, n) is an int, rounded half to even at 10**-n
      if (prec >= 0) return Value(v.as_int());
      if (prec < -18) return Value(0);
      int64_t m = 1;
      for (int64_t i = 0; i < -prec; ++i) m *= 10;
      const int64_t x = v.as_int();
      int64_t q = x / m - (x % m < 0), r = x - q * m;
      if (2 * r > m || (2 * r == m && (q & 1))) ++q;
      return Value(q * m);
    }
    if (prec >= 0 && prec < 300) {
      char buf[512];
      std::snprintf(buf, sizeof buf, "%.*f", int(prec), v.as_number());
      return Value(std::strtod(buf, nullptr));
    }
    const double scale = std::pow(10.0, double(-prec));
    return Value(std::nearbyint(v.as_number() / scale) * scale);
  }
  const double scale = std::pow(10.0, double(prec));
  const double x = method == "ceil" ? std::ceil(v.as_number() * scale) : std::floor(v.as_number() * scale);
  return Value(double(int64_t(x)) / scale);
}

// attr(name) is getattr, never an item: a dict's keys are not its attributes (its methods are).
Value f_attr(Interpreter&, const Value& v, const Args& a) {
  const Value* n = a.get(0, "name");
  if (!n) throw std::runtime_error("attr() needs a name");
  const std::string name = text_of(*n);
  if (v.is_undefined()) throw std::runtime_error(v.undefined_why());
  if (v.is_object() && !v.object().is_namespace) {
    if (is_dict_method(name)) return method_value(v, name);
  } else if (v.is_object()) {
    if (const Value* x = v.object().find(name)) return *x;
  } else if (v.is_string() || v.is_array()) {
    return method_value(v, name);
  }
  return Value::undefined("'" + std::string(v.type_name()) + " object' has no attribute '" + name + "'");
}

// Jinja2's format filter: `value % args`, or `value % kwargs` (a mapping) when given keywords.
Value f_format(Interpreter&, const Value& v, const Args& a) {
  if (!a.kw.empty()) {
    if (!a.pos.empty()) throw std::runtime_error("can't handle positional and keyword arguments at the same time");
    Object o;
    for (const auto& [k, x] : a.kw) o.set(k, x);
    return Value(percent_format(text_of(v), Value(std::move(o))));
  }
  return Value(percent_format(text_of(v), Value::tuple(a.pos)));
}

const Table& table() {
  static const Table t = [] {
    Table t{
      {"tojson", f_tojson}, {"length", f_length}, {"count", f_length}, {"default", f_default}, {"d", f_default},
      {"trim", f_trim}, {"upper", f_upper}, {"lower", f_lower}, {"capitalize", f_capitalize},
      {"string", f_string}, {"safe", f_safe}, {"escape", f_escape}, {"e", f_escape}, {"forceescape", f_escape},
      {"replace", f_replace}, {"list", f_list}, {"first", f_first}, {"last", f_last}, {"reverse", f_reverse},
      {"join", f_join}, {"items", f_items}, {"map", f_map}, {"select", f_select}, {"reject", f_reject},
      {"selectattr", f_selectattr}, {"rejectattr", f_rejectattr}, {"sum", f_sum}, {"int", f_int},
      {"float", f_float}, {"abs", f_abs}, {"round", f_round}, {"attr", f_attr}, {"format", f_format}};
    add_list_filters(t);
    add_text_filters(t);
    return t;
  }();
  return t;
}

}  // namespace

bool is_filter(std::string_view name) { return table().count(name) > 0; }

Value apply_filter(Interpreter& in, const std::string& name, const Value& v, const Args& args) {
  auto it = table().find(name);
  if (it == table().end()) throw std::runtime_error("unknown filter '" + name + "'");
  check_signature("filter", name, args);
  return it->second(in, v, args);
}

}  // namespace exspec::jinja
