// The values a Jinja template computes with, as Python (Jinja2's host) has them: undefined,
// None, bool, int, float, str, list, dict (insertion-ordered, as Python's), and callables
// (macros, builtins, bound methods). Lists and dicts are shared, as Python's references are; a
// namespace() is the one dict a template may change. Torch-free.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace exspec::jinja {

class Value;
using Array = std::vector<Value>;

// A dict: string keys in insertion order (a template's dicts are small: a linear lookup).
struct Object {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;  // namespace(): its attributes may be assigned
  const Value* find(std::string_view key) const;
  void set(const std::string& key, Value v);
};

// A call's arguments: positional, then keyword (a {% call %} block's body is the keyword
// `caller`, as in Jinja2).
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  // The argument at position i or named `name` (a keyword wins); nullptr when neither is given.
  const Value* get(size_t i, std::string_view name) const;
};

struct Callable {
  std::string name;
  std::function<Value(const Args&)> fn;
};

struct Undefined {
  std::string why;  // what was missing, for the error when it is used
};

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, Array, Object, Callable };

  Value() : v_(Undefined{}) {}
  static Value undefined(std::string why) { Value v; v.v_ = Undefined{std::move(why)}; return v; }
  static Value none() { Value v; v.v_ = nullptr; return v; }
  Value(bool b) : v_(b) {}
  Value(int i) : v_(int64_t(i)) {}
  Value(int64_t i) : v_(i) {}
  Value(size_t i) : v_(int64_t(i)) {}
  Value(double d) : v_(d) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(Array a) : v_(std::make_shared<Array>(std::move(a))) {}
  Value(Object o) : v_(std::make_shared<Object>(std::move(o))) {}
  Value(std::shared_ptr<Object> o) : v_(std::move(o)) {}
  static Value function(std::string name, std::function<Value(const Args&)> fn) {
    Value v;
    v.v_ = std::make_shared<Callable>(Callable{std::move(name), std::move(fn)});
    return v;
  }
  static Value from_json(const nlohmann::ordered_json& j);
  // A tuple: a list that Python prints in parentheses ((1, 2), the pairs of items()).
  static Value tuple(Array a) {
    Value v(std::move(a));
    v.tuple_ = true;
    return v;
  }
  bool is_tuple() const { return tuple_; }
  // A namedtuple (groupby's (grouper, list)): a tuple whose items are attributes too.
  static Value named_tuple(Array a, std::vector<std::string> fields) {
    Value v = tuple(std::move(a));
    v.fields_ = std::make_shared<const std::vector<std::string>>(std::move(fields));
    return v;
  }
  // The namedtuple item called `name`, or nullptr.
  const Value* field(std::string_view name) const;

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_float() const { return kind() == Kind::Float; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }  // Python: bool is an int
  bool is_string() const { return kind() == Kind::String; }
  bool is_array() const { return kind() == Kind::Array; }
  bool is_object() const { return kind() == Kind::Object; }
  bool is_callable() const { return kind() == Kind::Callable; }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const;  // bool and int
  double as_number() const;  // bool, int and float
  const std::string& str() const { return std::get<std::string>(v_); }
  const Array& array() const { return *std::get<std::shared_ptr<Array>>(v_); }
  const Object& object() const { return *std::get<std::shared_ptr<Object>>(v_); }
  const std::shared_ptr<Object>& object_ptr() const { return std::get<std::shared_ptr<Object>>(v_); }
  const Callable& callable() const { return *std::get<std::shared_ptr<Callable>>(v_); }
  const std::string& undefined_why() const { return std::get<Undefined>(v_).why; }

  bool truthy() const;
  // Python's type name, for error messages ("str", "dict object" ...).
  const char* type_name() const;

 private:
  std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::string, std::shared_ptr<Array>,
               std::shared_ptr<Object>, std::shared_ptr<Callable>>
      v_;
  bool tuple_ = false;
  std::shared_ptr<const std::vector<std::string>> fields_;
};

// Python's ==, between any two values (1 == 1.0 == True; lists and dicts element-wise).
bool equal(const Value& a, const Value& b);
// Python's hash() would accept it: not a list or dict, nor a tuple holding one.
bool hashable(const Value& v);
// Python's <, for numbers with numbers, str with str, lists element-wise; throws otherwise.
bool less(const Value& a, const Value& b);
// str(v) as Jinja prints it: None, True, 1.0, ['a', 1], {'k': 'v'}; undefined prints nothing.
std::string to_str(const Value& v);
// repr(v) as Python writes it.
std::string repr(const Value& v);
// Python's float repr: the shortest text that reads back the same (1.0, 1e+16, 1e-05).
std::string float_repr(double d);
// The value as JSON for an OpenAI client (undefined and callables become null).
nlohmann::ordered_json to_json(const Value& v);

// A template error: parsing (line and construct) or rendering (a raise_exception, a bad operation).
class TemplateError : public std::runtime_error {
 public:
  TemplateError(const std::string& what, int line, bool raised = false)
      : std::runtime_error(what), line_(line), raised_(raised) {}
  int line() const { return line_; }
  bool raised() const { return raised_; }  // raise_exception("...") in the template itself

 private:
  int line_;
  bool raised_;
};

}  // namespace exspec::jinja
