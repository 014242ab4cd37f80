// The functions a template may call by name: Jinja2's range, namespace, dict, and Hugging Face's
// raise_exception and strftime_now.
#include <ctime>

#include "chat/jinja/builtins.h"
#include "chat/jinja/interpreter.h"

namespace exspec::jinja {
namespace {

const char* const kGlobals[] = {"range", "namespace", "dict", "raise_exception", "strftime_now"};

Value range(const Args& a) {
  if (!a.kw.empty()) throw std::runtime_error("range() takes no keyword arguments");
  if (a.pos.empty() || a.pos.size() > 3) throw std::runtime_error("range expected 1 to 3 arguments");
  for (const auto& v : a.pos)
    if (!v.is_int() && !v.is_bool()) throw std::runtime_error("range() takes integers");
  int64_t start = 0, stop, step = 1;
  if (a.pos.size() == 1) {
    stop = a.pos[0].as_int();
  } else {
    start = a.pos[0].as_int();
    stop = a.pos[1].as_int();
    if (a.pos.size() == 3) step = a.pos[2].as_int();
  }
  if (step == 0) throw std::runtime_error("range() arg 3 must not be zero");
  Array out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (out.size() >= 100000) throw std::runtime_error("range() too large (more than 100000 items)");
    out.push_back(Value(i));
  }
  return Value(std::move(out));
}

Object kwargs_object(const Args& a) {
  Object o;
  for (const auto& p : a.pos) {  // namespace(d) / dict(d): a mapping's items first
    if (!p.is_object()) throw std::runtime_error("expected a mapping");
    for (const auto& [k, v] : p.object().items) o.set(k, v);
  }
  for (const auto& [k, v] : a.kw) o.set(k, v);
  return o;
}

}  // namespace

bool is_global(std::string_view name) {
  for (const char* g : kGlobals)
    if (name == g) return true;
  return false;
}

std::unordered_map<std::string, Value> global_functions(Interpreter& in) {
  std::unordered_map<std::string, Value> g;
  g["range"] = Value::function("range", range);
  g["namespace"] = Value::function("namespace", [](const Args& a) {
    Object o = kwargs_object(a);
    o.is_namespace = true;
    return Value(std::move(o));
  });
  g["dict"] = Value::function("dict", [](const Args& a) { return Value(kwargs_object(a)); });
  g["raise_exception"] = Value::function("raise_exception", [](const Args& a) -> Value {
    throw TemplateError(a.pos.empty() ? "raise_exception() called" : to_str(a.pos[0]), 0, /*raised=*/true);
  });
  const std::time_t now = in.now();
  g["strftime_now"] = Value::function("strftime_now", [now](const Args& a) {
    if (a.pos.empty() || !a.pos[0].is_string()) throw std::runtime_error("strftime_now() needs a format string");
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[256];
    const size_t n = std::strftime(buf, sizeof buf, a.pos[0].str().c_str(), &tm);
    return Value(std::string(buf, n));
  });
  return g;
}

}  // namespace exspec::jinja
