#include "chat/jinja/interpreter.h"

#include "chat/jinja/builtins.h"
#include "chat/jinja/pystr.h"

namespace exspec::jinja {

std::unordered_map<std::string, Value> global_functions(Interpreter& in);  // globals.cpp

namespace {

void set_var(Frame& f, const std::string& name, Value v) { f.vars[name] = std::move(v); }

// Binds `names` to `v` (one name) or to v's items (several: a, b = pair).
void unpack(Frame& f, const std::vector<std::string>& names, const Value& v) {
  if (names.size() == 1) {
    set_var(f, names[0], v);
    return;
  }
  const Array items = iterate(v);
  if (items.size() != names.size())
    throw std::runtime_error("cannot unpack " + std::to_string(items.size()) + " values into " +
                             std::to_string(names.size()) + " names");
  for (size_t i = 0; i < names.size(); ++i) set_var(f, names[i], items[i]);
}

}  // namespace

Interpreter::Interpreter(const Object& globals, std::time_t now) : globals_(globals), now_(now) {
  builtins_ = global_functions(*this);
}

std::string Interpreter::render(const Body& program) {
  auto root = std::make_shared<Frame>();
  std::string out;
  exec(program, root, out);
  return out;
}

Interpreter::Flow Interpreter::exec(const Body& body, const FramePtr& f, std::string& out) {
  for (const auto& s : body) {
    const Flow fl = exec_one(*s, f, out);
    if (fl != Flow::Normal) return fl;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::exec_one(const Stmt& s, const FramePtr& f, std::string& out) {
  try {
    switch (s.kind) {
      case Stmt::Text: out += s.text; return Flow::Normal;
      case Stmt::Output: out += to_str(eval(*s.expr, f)); return Flow::Normal;
      case Stmt::If:
        for (const auto& [cond, body] : s.branches)
          if (eval(*cond, f).truthy()) return exec(body, f, out);
        return exec(s.else_body, f, out);
      case Stmt::For: return exec_for(s, f, out);
      case Stmt::Set: exec_set(s, f, eval(*s.expr, f)); return Flow::Normal;
      case Stmt::SetBlock: {
        std::string text;
        exec(s.body, f, text);
        Value v(std::move(text));
        if (s.expr) v = filter(*s.expr, f, &v);
        set_var(*f, s.targets[0], std::move(v));
        return Flow::Normal;
      }
      case Stmt::Macro: set_var(*f, s.text, make_macro(s, f, s.text)); return Flow::Normal;
      case Stmt::CallBlock: {
        Args a = args_of(*s.expr, f);
        for (const auto& kw : a.kw)
          if (kw.first == "caller") throw std::runtime_error("got multiple values for keyword argument 'caller'");
        a.kw.emplace_back("caller", make_macro(s, f, "caller"));
        out += to_str(call(eval(*s.expr->a, f), a));
        return Flow::Normal;
      }
      case Stmt::FilterBlock: {
        std::string text;
        exec(s.body, f, text);
        const Value v(std::move(text));
        out += to_str(filter(*s.expr, f, &v));
        return Flow::Normal;
      }
      case Stmt::With: {
        auto inner = std::make_shared<Frame>(Frame{{}, f});
        for (size_t i = 0; i < s.targets.size(); ++i) set_var(*inner, s.targets[i], eval(*s.values[i], f));
        return exec(s.body, inner, out);
      }
      case Stmt::Break: return Flow::Break;
      case Stmt::Continue: return Flow::Continue;
      case Stmt::Scope: return exec(s.body, f, out);
    }
  } catch (const TemplateError&) {
    throw;
  } catch (const std::exception& e) {
    throw TemplateError(e.what(), s.line);
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::exec_for(const Stmt& s, const FramePtr& f, std::string& out) {
  const Value seq = eval(*s.expr, f);
  if (seq.is_none() || seq.is_number() || seq.is_callable())
    throw TemplateError("'" + std::string(seq.type_name()) + "' object is not iterable", s.line);
  Array items = iterate(seq);
  if (s.cond) {  // for x in xs if cond: the loop counts only what passes
    Array kept;
    for (auto& it : items) {
      auto probe = std::make_shared<Frame>(Frame{{}, f});
      unpack(*probe, s.targets, it);
      if (eval(*s.cond, probe).truthy()) kept.push_back(std::move(it));
    }
    items = std::move(kept);
  }
  const int64_t n = int64_t(items.size());
  auto last_changed = std::make_shared<std::optional<Array>>();
  bool completed = false;
  for (int64_t i = 0; i < n; ++i) {
    Object loop;
    loop.set("index", Value(i + 1));
    loop.set("index0", Value(i));
    loop.set("revindex", Value(n - i));
    loop.set("revindex0", Value(n - i - 1));
    loop.set("first", Value(i == 0));
    loop.set("last", Value(i == n - 1));
    loop.set("length", Value(n));
    loop.set("depth", Value(1));
    loop.set("depth0", Value(0));
    loop.set("previtem", i > 0 ? items[size_t(i - 1)] : Value::undefined("there is no previous item"));
    loop.set("nextitem", i + 1 < n ? items[size_t(i + 1)] : Value::undefined("there is no next item"));
    loop.set("cycle", Value::function("cycle", [i](const Args& a) {
               if (a.pos.empty()) throw std::runtime_error("no items for cycling given");
               return a.pos[size_t(i) % a.pos.size()];
             }));
    loop.set("changed", Value::function("changed", [last_changed](const Args& a) {
               if (*last_changed && last_changed->value().size() == a.pos.size()) {
                 bool same = true;
                 for (size_t k = 0; k < a.pos.size(); ++k) same = same && equal((**last_changed)[k], a.pos[k]);
                 if (same) return Value(false);
               }
               *last_changed = a.pos;
               return Value(true);
             }));
    auto inner = std::make_shared<Frame>(Frame{{}, f});
    unpack(*inner, s.targets, items[size_t(i)]);
    set_var(*inner, "loop", Value(std::move(loop)));
    const Flow fl = exec(s.body, inner, out);
    if (fl == Flow::Break) break;
    completed = completed || fl == Flow::Normal;
  }
  // Jinja2 runs the else block unless some iteration ran its body to the end: after no items,
  // and also when every iteration ended in break or continue.
  if (!completed) return exec(s.else_body, f, out);
  return Flow::Normal;
}

void Interpreter::exec_set(const Stmt& s, const FramePtr& f, Value v) {
  if (!s.is_attr) {
    unpack(*f, s.targets, v);
    return;
  }
  const Value target = lookup(s.targets[0], f);
  if (!target.is_object() || !target.object().is_namespace)
    throw std::runtime_error("cannot assign attribute on non-namespace object");
  target.object_ptr()->set(s.targets[1], std::move(v));
}

Value Interpreter::lookup(const std::string& name, const FramePtr& f) const {
  for (const Frame* fr = f.get(); fr; fr = fr->parent.get())
    if (auto it = fr->vars.find(name); it != fr->vars.end()) return it->second;
  if (const Value* v = globals_.find(name)) return *v;
  if (auto it = builtins_.find(name); it != builtins_.end()) return it->second;
  return Value::undefined("'" + name + "' is undefined");
}

Value Interpreter::eval(const Expr& e, const FramePtr& f) {
  try {
    return eval_inner(e, f);
  } catch (const TemplateError& x) {
    if (x.line() > 0) throw;
    throw TemplateError(x.what(), e.line, x.raised());  // raised by a builtin: the line of its call
  } catch (const std::exception& x) {
    throw TemplateError(x.what(), e.line);
  }
}

Value Interpreter::attr(const Value& obj, const std::string& name, bool item_first) {
  if (obj.is_undefined()) throw std::runtime_error(obj.undefined_why().empty() ? "undefined value has no attribute '" + name + "'" : obj.undefined_why());
  if (obj.is_object()) {
    const bool method = !obj.object().is_namespace && is_dict_method(name);
    if (method && !item_first) return method_value(obj, name);
    if (const Value* v = obj.object().find(name)) return *v;
    if (method) return method_value(obj, name);
    return Value::undefined("'" + std::string(obj.object().is_namespace ? "Namespace" : "dict object") +
                            "' has no attribute '" + name + "'");
  }
  if (const Value* v = obj.is_array() ? obj.field(name) : nullptr) return *v;
  if (obj.is_string() || obj.is_array()) {
    Value m = method_value(obj, name);
    if (!m.is_undefined()) return m;
  }
  return Value::undefined("'" + std::string(obj.type_name()) + " object' has no attribute '" + name + "'");
}

Value Interpreter::eval_inner(const Expr& e, const FramePtr& f) {
  switch (e.kind) {
    case Expr::Literal: return e.value;
    case Expr::Name: return lookup(e.name, f);
    case Expr::Attr: return attr(eval(*e.a, f), e.name, false);
    case Expr::Item: {
      const Value obj = eval(*e.a, f);
      const Value key = eval(*e.b, f);
      if (obj.is_undefined()) throw std::runtime_error(obj.undefined_why());
      if ((obj.is_array() || obj.is_string()) && key.is_number() && !key.is_float()) {
        const int64_t n = obj.is_array() ? int64_t(obj.array().size()) : int64_t(pystr::length(obj.str()));
        int64_t i = key.as_int();
        if (i < 0) i += n;
        if (i < 0 || i >= n) return Value::undefined("index " + std::to_string(key.as_int()) + " is out of range");
        return obj.is_array() ? obj.array()[size_t(i)] : Value(pystr::slice(obj.str(), i, i + 1, 1));
      }
      if (key.is_string()) return attr(obj, key.str(), true);
      if (obj.is_object()) return Value::undefined("'dict object' has no attribute " + repr(key));
      return Value::undefined("'" + std::string(obj.type_name()) + " object' has no item " + repr(key));
    }
    case Expr::Slice: {
      const Value obj = eval(*e.a, f);
      auto bound = [&](const ExprPtr& x) -> std::optional<int64_t> {
        if (!x) return std::nullopt;
        const Value v = eval(*x, f);
        if (v.is_none()) return std::nullopt;
        if (!v.is_number() || v.is_float()) throw std::runtime_error("slice indices must be integers or None");
        return v.as_int();
      };
      const auto b = bound(e.b), c = bound(e.c), d = bound(e.d);
      const int64_t step = d ? *d : 1;
      if (obj.is_string()) return Value(pystr::slice(obj.str(), b, c, step));
      if (obj.is_undefined()) throw std::runtime_error(obj.undefined_why());
      if (!obj.is_array()) throw std::runtime_error(std::string("'") + obj.type_name() + "' object is not subscriptable");
      Array out;
      for (int64_t i : pystr::slice_indices(int64_t(obj.array().size()), b, c, step)) out.push_back(obj.array()[size_t(i)]);
      return obj.is_tuple() ? Value::tuple(std::move(out)) : Value(std::move(out));
    }
    case Expr::Call: return call_expr(e, f);
    case Expr::Filter: return filter(e, f, nullptr);
    case Expr::Test: {
      const Value v = eval(*e.a, f);
      const bool r = apply_test(*this, e.name, v, args_of(e, f));
      return Value(e.negated ? !r : r);
    }
    case Expr::Unary: {
      const Value v = eval(*e.a, f);
      if (e.name == "not") return Value(!v.truthy());
      if (!v.is_number()) throw std::runtime_error(std::string("bad operand type for unary ") + e.name + ": '" + v.type_name() + "'");
      if (e.name == "+") return v.is_bool() ? Value(v.as_int()) : v;
      return v.is_float() ? Value(-v.as_number()) : Value(-v.as_int());
    }
    case Expr::Binary: return binary(e, f);
    case Expr::Compare: return compare(e, f);
    case Expr::Cond:
      if (eval(*e.a, f).truthy()) return eval(*e.b, f);
      return e.c ? eval(*e.c, f) : Value::undefined("the inline if expression's condition was false and it has no else");
    case Expr::List:
    case Expr::Tuple: {
      Array a;
      for (const auto& x : e.args) a.push_back(eval(*x, f));
      return e.kind == Expr::Tuple ? Value::tuple(std::move(a)) : Value(std::move(a));
    }
    case Expr::Dict: {
      Object o;
      for (size_t i = 0; i < e.args.size(); ++i) {
        const Value k = eval(*e.dict_keys[i], f);
        o.set(k.is_string() ? k.str() : to_str(k), eval(*e.args[i], f));
      }
      return Value(std::move(o));
    }
  }
  return Value();
}

Value Interpreter::binary(const Expr& e, const FramePtr& f) {
  const Value a = eval(*e.a, f);
  if (e.name == "and") return a.truthy() ? eval(*e.b, f) : a;
  if (e.name == "or") return a.truthy() ? a : eval(*e.b, f);
  const Value b = eval(*e.b, f);
  if (e.name == "~") return Value(to_str(a) + to_str(b));
  // Undefined's operators raise; str's % takes it as a value (str(Undefined) is "").
  const bool str_mod = e.name == "%" && a.is_string();
  for (const Value* v : {&a, &b})
    if (v->is_undefined() && !(str_mod && v == &b)) throw std::runtime_error(v->undefined_why());
  return arithmetic(e.name, a, b);
}

Value Interpreter::compare(const Expr& e, const FramePtr& f) {
  Value left = eval(*e.a, f);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const Value right = eval(*e.args[i], f);
    const std::string& op = e.ops[i];
    bool r;
    if (op == "==") r = equal(left, right);
    else if (op == "!=") r = !equal(left, right);
    else if (op == "in") r = contains(right, left);
    else if (op == "not in") r = !contains(right, left);
    else {
      for (const Value* v : {static_cast<const Value*>(&left), &right})
        if (v->is_undefined()) throw std::runtime_error(v->undefined_why());
      if (op == "<") r = less(left, right);
      else if (op == ">") r = less(right, left);
      else if (op == "<=") r = !less(right, left);
      else r = !less(left, right);
    }
    if (!r) return Value(false);
    left = right;
  }
  return Value(true);
}

}  // namespace exspec::jinja
