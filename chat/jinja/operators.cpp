// Python's arithmetic, membership, iteration and %-formatting over Values.
#include <cmath>
#include <utility>

#include "chat/jinja/interpreter.h"
#include "chat/jinja/pyformat.h"
#include "chat/jinja/pystr.h"

namespace exspec::jinja {
namespace {

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  throw std::runtime_error("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" +
                           b.type_name() + "'");
}

Value repeat(const Value& seq, int64_t n) {
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < n; ++i) out += seq.str();
    return Value(std::move(out));
  }
  Array out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.array().begin(), seq.array().end());
  return seq.is_tuple() ? Value::tuple(std::move(out)) : Value(std::move(out));
}

// CPython's float divmod: the remainder has the divisor's sign (a zero one too), the quotient
// is floored and nudged to the nearest integer of (a - mod) / b.
std::pair<double, double> py_divmod(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  double floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, a / b);
  }
  return {floordiv, mod};
}

}  // namespace

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value(a.str() + b.str());
    if (a.is_array() && b.is_array() && a.is_tuple() == b.is_tuple()) {
      Array out = a.array();
      out.insert(out.end(), b.array().begin(), b.array().end());
      return a.is_tuple() ? Value::tuple(std::move(out)) : Value(std::move(out));
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_array()) && b.is_number() && !b.is_float()) return repeat(a, b.as_int());
    if ((b.is_string() || b.is_array()) && a.is_number() && !a.is_float()) return repeat(b, a.as_int());
  }
  if (op == "%" && a.is_string()) return Value(percent_format(a.str(), b));
  if (!a.is_number() || !b.is_number()) unsupported(op, a, b);
  const bool ints = !a.is_float() && !b.is_float();
  if (op == "/") {
    if (b.as_number() == 0) throw std::runtime_error("division by zero");
    return Value(a.as_number() / b.as_number());
  }
  if (op == "//" || op == "%") {
    if (b.as_number() == 0) throw std::runtime_error(op == "%" ? "modulo by zero" : "integer division or modulo by zero");
    if (ints) {
      const int64_t x = a.as_int(), y = b.as_int();
      int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) {
        --q;
        r += y;
      }
      return op == "//" ? Value(q) : Value(r);
    }
    const double x = a.as_number(), y = b.as_number();
    const auto [q, r] = py_divmod(x, y);
    return op == "//" ? Value(q) : Value(r);
  }
  if (op == "**") {
    if (ints && b.as_int() >= 0) {
      int64_t r = 1;
      for (int64_t i = 0; i < b.as_int(); ++i) r *= a.as_int();
      return Value(r);
    }
    return Value(std::pow(a.as_number(), b.as_number()));
  }
  if (ints) {
    if (op == "+") return Value(a.as_int() + b.as_int());
    if (op == "-") return Value(a.as_int() - b.as_int());
    if (op == "*") return Value(a.as_int() * b.as_int());
  } else {
    if (op == "+") return Value(a.as_number() + b.as_number());
    if (op == "-") return Value(a.as_number() - b.as_number());
    if (op == "*") return Value(a.as_number() * b.as_number());
  }
  unsupported(op, a, b);
}

bool contains(const Value& c, const Value& x) {
  if (c.is_undefined()) return false;
  if (c.is_string()) {
    if (!x.is_string()) throw std::runtime_error("'in <string>' requires string as left operand, not " + std::string(x.type_name()));
    return c.str().find(x.str()) != std::string::npos;
  }
  if (c.is_array()) {
    for (const auto& e : c.array())
      if (equal(e, x)) return true;
    return false;
  }
  if (c.is_object()) {
    if (!hashable(x))  // a dict's keys are hashed
      throw std::runtime_error(std::string("unhashable type: '") + x.type_name() + "'");
    return x.is_string() && c.object().find(x.str()) != nullptr;
  }
  throw std::runtime_error(std::string("argument of type '") + c.type_name() + "' is not iterable");
}

Array iterate(const Value& v) {
  if (v.is_array()) return v.array();
  if (v.is_object()) {
    Array keys;
    for (const auto& [k, e] : v.object().items) keys.push_back(Value(k));
    return keys;
  }
  if (v.is_string()) {
    Array chars;
    for (char32_t c : pystr::decode(v.str())) chars.push_back(Value(pystr::encode(std::u32string(1, c))));
    return chars;
  }
  if (v.is_undefined()) return {};
  throw std::runtime_error(std::string("'") + v.type_name() + "' object is not iterable");
}

}  // namespace exspec::jinja
