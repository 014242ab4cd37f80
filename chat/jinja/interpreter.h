// Runs a parsed template over its variables, with Jinja2's scoping: a for loop's body gets a
// fresh scope each iteration (what it sets stays inside), if does not; macros see the scope they
// were defined in; namespace() objects carry values out of loops.
#pragma once
#include <ctime>
#include <memory>
#include <string>
#include <unordered_map>

#include "chat/jinja/ast.h"

namespace exspec::jinja {

struct Frame {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Frame> parent;
};

class Interpreter {
 public:
  // `globals`: the template's variables (messages, tools, add_generation_prompt, bos_token...);
  // `now`: what strftime_now formats (one instant per render, so a prompt can be reproduced).
  Interpreter(const Object& globals, std::time_t now);

  std::string render(const Body& program);
  // Calls a macro, a builtin or a bound method with its arguments.
  Value call(const Value& f, const Args& args);
  std::time_t now() const { return now_; }

 private:
  enum class Flow { Normal, Break, Continue };
  using FramePtr = std::shared_ptr<Frame>;

  Flow exec(const Body& body, const FramePtr& f, std::string& out);
  Flow exec_one(const Stmt& s, const FramePtr& f, std::string& out);
  Flow exec_for(const Stmt& s, const FramePtr& f, std::string& out);
  void exec_set(const Stmt& s, const FramePtr& f, Value v);
  Value make_macro(const Stmt& s, const FramePtr& f, const std::string& name);
  void bind_macro_args(const Stmt& def, const std::string& name, const Args& a, const FramePtr& frame);
  Value eval(const Expr& e, const FramePtr& f);
  Value eval_inner(const Expr& e, const FramePtr& f);
  Value lookup(const std::string& name, const FramePtr& f) const;
  Value attr(const Value& obj, const std::string& name, bool item_first);
  Value binary(const Expr& e, const FramePtr& f);
  Value compare(const Expr& e, const FramePtr& f);
  Value call_expr(const Expr& e, const FramePtr& f);
  Args args_of(const Expr& e, const FramePtr& f);
  Value filter(const Expr& e, const FramePtr& f, const Value* input);

  Object globals_;
  std::unordered_map<std::string, Value> builtins_;
  std::time_t now_;
  int depth_ = 0;  // macro calls in flight: a runaway recursion is an error, not a crash
};

// Python's binary operators (+ - * / // % **) on two values; throws std::runtime_error.
Value arithmetic(const std::string& op, const Value& a, const Value& b);
// Python's "x in container".
bool contains(const Value& container, const Value& x);
// Python's iteration: a list's items, a dict's keys, a str's characters; undefined: nothing.
Array iterate(const Value& v);

}  // namespace exspec::jinja
