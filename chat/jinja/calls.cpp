// Calls: arguments spread as Python spreads them, macros bound as Jinja2's Macro.__call__ binds
// them, filters applied with the line of their use.
#include <optional>

#include "chat/jinja/builtins.h"
#include "chat/jinja/interpreter.h"

namespace exspec::jinja {

Value Interpreter::make_macro(const Stmt& s, const FramePtr& f, const std::string& name) {
  const Stmt* def = &s;
  return Value::function(name, [this, def, f, name](const Args& a) {
    if (++depth_ > 200) {
      --depth_;
      throw std::runtime_error("macro recursion deeper than 200 calls");
    }
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    auto frame = std::make_shared<Frame>(Frame{{}, f});
    bind_macro_args(*def, name, a, frame);
    std::string out;
    exec(def->body, frame, out);
    return Value(std::move(out));
  });
}

// Jinja2's Macro.__call__: positions fill the parameters in order, keywords the ones after them;
// a keyword left over goes to `kwargs`, a position left over to `varargs`, where the body reads
// them, and is an error where it does not.
void Interpreter::bind_macro_args(const Stmt& def, const std::string& name, const Args& a, const FramePtr& frame) {
  std::vector<std::pair<std::string, Value>> kw = a.kw;
  auto take = [&](const std::string& k) -> std::optional<Value> {
    for (auto it = kw.begin(); it != kw.end(); ++it)
      if (it->first == k) {
        Value v = std::move(it->second);
        kw.erase(it);
        return v;
      }
    return std::nullopt;
  };
  const size_t n = def.params.size();
  for (size_t i = 0; i < n; ++i) {
    const Param& p = def.params[i];
    std::optional<Value> v = i < a.pos.size() ? std::optional<Value>(a.pos[i]) : take(p.name);
    if (!v && p.dflt) v = eval(*p.dflt, frame);
    frame->vars.insert_or_assign(p.name, v ? *v : Value::undefined("parameter '" + p.name + "' was not provided"));
  }
  if (def.catch_caller) {
    std::optional<Value> c = take("caller");
    frame->vars.insert_or_assign("caller", c ? *c : Value::undefined("No caller defined"));
  }
  if (def.catch_kwargs) {
    Object rest;
    for (auto& [k, v] : kw) rest.set(k, std::move(v));
    frame->vars.insert_or_assign("kwargs", Value(std::move(rest)));
  } else if (!kw.empty()) {
    for (const auto& [k, v] : kw)
      if (k == "caller")
        throw std::runtime_error("macro '" + name + "' was invoked with two values for the special caller argument");
    throw std::runtime_error("macro '" + name + "' takes no keyword argument '" + kw.front().first + "'");
  }
  if (def.catch_varargs) {
    Array rest;
    for (size_t i = n; i < a.pos.size(); ++i) rest.push_back(a.pos[i]);
    frame->vars.insert_or_assign("varargs", Value::tuple(std::move(rest)));
  } else if (a.pos.size() > n) {
    throw std::runtime_error("macro '" + name + "' takes not more than " + std::to_string(n) + " argument(s)");
  }
}

// Python's f(pos..., kw=..., *star, **dstar).
Args Interpreter::args_of(const Expr& e, const FramePtr& f) {
  Args a;
  for (const auto& x : e.args) a.pos.push_back(eval(*x, f));
  for (const auto& [k, x] : e.kwargs) a.kw.emplace_back(k, eval(*x, f));
  if (e.star) {
    const Value v = eval(*e.star, f);
    if (v.is_none() || v.is_number() || v.is_callable())
      throw std::runtime_error(std::string("argument after * must be an iterable, not ") + v.type_name());
    for (Value& x : iterate(v)) a.pos.push_back(std::move(x));
  }
  if (e.dstar) {
    const Value v = eval(*e.dstar, f);
    if (!v.is_object() || v.object().is_namespace)
      throw std::runtime_error(std::string("argument after ** must be a mapping, not ") + v.type_name());
    for (const auto& [k, x] : v.object().items) {
      for (const auto& kw : a.kw)
        if (kw.first == k) throw std::runtime_error("got multiple values for keyword argument '" + k + "'");
      a.kw.emplace_back(k, x);
    }
  }
  return a;
}

Value Interpreter::call_expr(const Expr& e, const FramePtr& f) {
  const Expr& callee = *e.a;
  if (callee.kind == Expr::Attr) {
    const Value obj = eval(*callee.a, f);
    if ((obj.is_string() || obj.is_array() || (obj.is_object() && !obj.object().find(callee.name))) &&
        is_method(callee.name))
      return call_method(obj, callee.name, args_of(e, f));
    return call(attr(obj, callee.name, false), args_of(e, f));
  }
  return call(eval(callee, f), args_of(e, f));
}

Value Interpreter::call(const Value& fn, const Args& args) {
  if (fn.is_undefined()) throw std::runtime_error(fn.undefined_why());
  if (!fn.is_callable()) throw std::runtime_error(std::string("'") + fn.type_name() + "' object is not callable");
  return fn.callable().fn(args);
}

// e: a Filter node whose operand is e.a, or (input given) a chain over a {% filter %} body.
Value Interpreter::filter(const Expr& e, const FramePtr& f, const Value* input) {
  const Value v = !e.a ? *input : e.a->kind == Expr::Filter ? filter(*e.a, f, input) : eval(*e.a, f);
  try {
    return apply_filter(*this, e.name, v, args_of(e, f));
  } catch (const TemplateError&) {
    throw;
  } catch (const std::exception& x) {
    throw TemplateError(x.what(), e.line);
  }
}

}  // namespace exspec::jinja
