#include "chat/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "chat/jinja/pystr.h"

namespace exspec::jinja {

const Value* Object::find(std::string_view key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Object::set(const std::string& key, Value v) {
  for (auto& [k, old] : items)
    if (k == key) {
      old = std::move(v);
      return;
    }
  items.emplace_back(key, std::move(v));
}

const Value* Args::get(size_t i, std::string_view name) const {
  for (const auto& [k, v] : kw)
    if (k == name) return &v;
  return i < pos.size() ? &pos[i] : nullptr;
}

const Value* Value::field(std::string_view name) const {
  if (!fields_) return nullptr;
  for (size_t i = 0; i < fields_->size() && i < array().size(); ++i)
    if ((*fields_)[i] == name) return &array()[i];
  return nullptr;
}

Value Value::from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return none();
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      return u <= uint64_t(INT64_MAX) ? Value(int64_t(u)) : Value(double(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      Array a;
      a.reserve(j.size());
      for (const auto& e : j) a.push_back(from_json(e));
      return Value(std::move(a));
    }
    case nlohmann::ordered_json::value_t::object: {
      Object o;
      for (auto it = j.begin(); it != j.end(); ++it) o.items.emplace_back(it.key(), from_json(it.value()));
      return Value(std::move(o));
    }
    default: return none();
  }
}

int64_t Value::as_int() const { return is_bool() ? int64_t(as_bool()) : std::get<int64_t>(v_); }

double Value::as_number() const { return is_float() ? std::get<double>(v_) : double(as_int()); }

bool Value::truthy() const {
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return as_bool();
    case Kind::Int: return as_int() != 0;
    case Kind::Float: return as_number() != 0;
    case Kind::String: return !str().empty();
    case Kind::Array: return !array().empty();
    case Kind::Object: return object().is_namespace || !object().items.empty();
    case Kind::Callable: return true;
  }
  return false;
}

const char* Value::type_name() const {
  switch (kind()) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::Array: return tuple_ ? "tuple" : "list";
    case Kind::Object: return object().is_namespace ? "Namespace" : "dict";
    case Kind::Callable: return "function";
  }
  return "?";
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_number() == b.as_number();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind() || a.is_tuple() != b.is_tuple()) return false;  // Python: (1,) != [1]
  switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.str() == b.str();
    case Value::Kind::Array: {
      if (a.array().size() != b.array().size()) return false;
      for (size_t i = 0; i < a.array().size(); ++i)
        if (!equal(a.array()[i], b.array()[i])) return false;
      return true;
    }
    case Value::Kind::Object: {
      if (a.object().is_namespace || b.object().is_namespace) return &a.object() == &b.object();
      if (a.object().items.size() != b.object().items.size()) return false;
      for (const auto& [k, v] : a.object().items) {
        const Value* w = b.object().find(k);
        if (!w || !equal(v, *w)) return false;
      }
      return true;
    }
    case Value::Kind::Callable: return &a.callable() == &b.callable();
    default: return false;
  }
}

bool hashable(const Value& v) {
  if (v.is_object()) return false;
  if (!v.is_array()) return true;
  if (!v.is_tuple()) return false;
  for (const auto& e : v.array())
    if (!hashable(e)) return false;
  return true;
}

bool less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_number() < b.as_number();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return pystr::decode(a.str()) < pystr::decode(b.str());
  if (a.is_array() && b.is_array() && a.is_tuple() == b.is_tuple()) {
    const Array &x = a.array(), &y = b.array();
    // Python: the first items that differ (by ==) decide with <; equal items are never ordered.
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!equal(x[i], y[i])) return less(x[i], y[i]);
    return x.size() < y.size();
  }
  throw std::invalid_argument(std::string("'<' not supported between instances of '") + a.type_name() + "' and '" +
                              b.type_name() + "'");
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // [-]d[.ddd]e[+-]XX
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exp10 = std::stoi(sci.substr(e + 1));
  const int decpt = exp10 + 1;  // value = 0.DIGITS x 10^decpt
  const int n = int(digits.size());
  std::string out;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) out = "0." + std::string(size_t(-decpt), '0') + digits;
    else if (decpt >= n) out = digits + std::string(size_t(decpt - n), '0') + ".0";
    else out = digits.substr(0, size_t(decpt)) + "." + digits.substr(size_t(decpt));
  } else {
    out = digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    const int x = decpt - 1;
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", x < 0 ? '-' : '+', std::abs(x));
    out += eb;
  }
  return sign + out;
}

namespace {

std::string show(const Value& v, bool as_repr) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return as_repr ? "Undefined" : "";
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return v.as_bool() ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v.as_int());
    case Value::Kind::Float: return float_repr(v.as_number());
    case Value::Kind::String: return as_repr ? pystr::quote(v.str()) : v.str();
    case Value::Kind::Array: {
      const Array& a = v.array();
      std::string out = v.is_tuple() ? "(" : "[";
      for (size_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + show(a[i], true);
      if (v.is_tuple() && a.size() == 1) out += ",";
      return out + (v.is_tuple() ? ")" : "]");
    }
    case Value::Kind::Object: {
      if (v.object().is_namespace) return "<Namespace>";
      std::string out = "{";
      bool first = true;
      for (const auto& [k, e] : v.object().items) {
        out += (first ? "" : ", ") + pystr::quote(k) + ": " + show(e, true);
        first = false;
      }
      return out + "}";
    }
    case Value::Kind::Callable: return "<function " + v.callable().name + ">";
  }
  return "";
}

}  // namespace

std::string to_str(const Value& v) { return show(v, false); }
std::string repr(const Value& v) { return v.is_undefined() ? "Undefined" : show(v, true); }

nlohmann::ordered_json to_json(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Bool: return v.as_bool();
    case Value::Kind::Int: return v.as_int();
    case Value::Kind::Float: return v.as_number();
    case Value::Kind::String: return v.str();
    case Value::Kind::Array: {
      auto a = nlohmann::ordered_json::array();
      for (const auto& e : v.array()) a.push_back(to_json(e));
      return a;
    }
    case Value::Kind::Object: {
      auto o = nlohmann::ordered_json::object();
      for (const auto& [k, e] : v.object().items) o[k] = to_json(e);
      return o;
    }
    default: return nullptr;
  }
}

}  // namespace exspec::jinja
