// Jinja2's builtin tests: `x is defined`, `x is string`, `n is divisibleby 3` ...
#include <map>

#include "chat/jinja/builtins.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/pystr.h"
#include "chat/jinja/signatures.h"

namespace exspec::jinja {
namespace {

using TestFn = bool (*)(const Value&, const Args&);

const Value& arg(const Args& a, const char* test) {
  if (a.pos.empty()) throw std::runtime_error(std::string("the test '") + test + "' needs an argument");
  return a.pos[0];
}

bool is_int(const Value& v) { return v.is_int(); }

const std::map<std::string, TestFn, std::less<>>& table() {
  static const std::map<std::string, TestFn, std::less<>> t{
      {"defined", [](const Value& v, const Args&) { return !v.is_undefined(); }},
      {"undefined", [](const Value& v, const Args&) { return v.is_undefined(); }},
      {"none", [](const Value& v, const Args&) { return v.is_none(); }},
      {"boolean", [](const Value& v, const Args&) { return v.is_bool(); }},
      {"true", [](const Value& v, const Args&) { return v.is_bool() && v.as_bool(); }},
      {"false", [](const Value& v, const Args&) { return v.is_bool() && !v.as_bool(); }},
      {"integer", [](const Value& v, const Args&) { return is_int(v); }},
      {"float", [](const Value& v, const Args&) { return v.is_float(); }},
      {"number", [](const Value& v, const Args&) { return v.is_number(); }},
      {"string", [](const Value& v, const Args&) { return v.is_string(); }},
      {"mapping", [](const Value& v, const Args&) { return v.is_object() && !v.object().is_namespace; }},
      // Jinja2's Undefined iterates (as empty) and has a length, so it passes both.
      {"iterable", [](const Value& v, const Args&) { return v.is_string() || v.is_array() || v.is_object() || v.is_undefined(); }},
      {"sequence", [](const Value& v, const Args&) { return v.is_string() || v.is_array() || v.is_object() || v.is_undefined(); }},
      // Jinja2's Undefined has __call__ (calling it raises), so it counts as callable.
      {"callable", [](const Value& v, const Args&) { return v.is_callable() || v.is_undefined(); }},
      {"odd", [](const Value& v, const Args&) { return equal(arithmetic("%", v, Value(2)), Value(1)); }},
      {"even", [](const Value& v, const Args&) { return equal(arithmetic("%", v, Value(2)), Value(0)); }},
      {"divisibleby", [](const Value& v, const Args& a) { return arithmetic("%", v, arg(a, "divisibleby")).as_number() == 0; }},
      {"eq", [](const Value& v, const Args& a) { return equal(v, arg(a, "eq")); }},
      {"ne", [](const Value& v, const Args& a) { return !equal(v, arg(a, "ne")); }},
      {"lt", [](const Value& v, const Args& a) { return less(v, arg(a, "lt")); }},
      {"le", [](const Value& v, const Args& a) { return !less(arg(a, "le"), v); }},
      {"gt", [](const Value& v, const Args& a) { return less(arg(a, "gt"), v); }},
      {"ge", [](const Value& v, const Args& a) { return !less(v, arg(a, "ge")); }},
      {"in", [](const Value& v, const Args& a) { return contains(arg(a, "in"), v); }},
      {"sameas", [](const Value& v, const Args& a) {
         const Value& o = arg(a, "sameas");
         return v.kind() == o.kind() && equal(v, o);
       }},
      {"lower", [](const Value& v, const Args&) { return pystr::islower(to_str(v)); }},
      {"upper", [](const Value& v, const Args&) { return pystr::isupper(to_str(v)); }},
      {"escaped", [](const Value&, const Args&) { return false; }},
      {"filter", [](const Value& v, const Args&) { return v.is_string() && is_filter(v.str()); }},
      {"test", [](const Value& v, const Args&) { return v.is_string() && is_test(v.str()); }},
  };
  return t;
}

const std::map<std::string, std::string, std::less<>>& aliases() {
  static const std::map<std::string, std::string, std::less<>> a{
      {"==", "eq"}, {"equalto", "eq"}, {"!=", "ne"}, {"<", "lt"}, {"lessthan", "lt"}, {"<=", "le"},
      {">", "gt"}, {"greaterthan", "gt"}, {">=", "ge"}};
  return a;
}

}  // namespace

bool is_test(std::string_view name) { return table().count(name) > 0 || aliases().count(name) > 0; }

bool apply_test(Interpreter&, const std::string& name, const Value& v, const Args& args) {
  auto al = aliases().find(name);
  auto it = table().find(al != aliases().end() ? al->second : name);
  if (it == table().end()) throw std::runtime_error("unknown test '" + name + "'");
  check_signature("test", name, args);
  return it->second(v, args);
}

}  // namespace exspec::jinja
