#include "chat/jinja/parser_expr.h"

#include "chat/jinja/builtins.h"

namespace exspec::jinja::detail {

std::vector<std::string> ExprParser::targets() {
  std::vector<std::string> out;
  const bool paren = skip_op("(");
  out.push_back(name());
  while (skip_op(",")) out.push_back(name());
  if (paren) expect_op(")");
  for (const auto& n : out) {
    defined_.insert(n);
    note_name(n, false);
  }
  return out;
}

std::vector<Param> ExprParser::params() {
  std::vector<Param> out;
  expect_op("(");
  while (!skip_op(")")) {
    if (!out.empty()) expect_op(",");
    if (skip_op(")")) break;
    Param p{name(), nullptr};
    if (skip_op("=")) p.dflt = expr();
    defined_.insert(p.name);
    out.push_back(std::move(p));
  }
  return out;
}

ExprPtr ExprParser::make(Expr::Kind k, int line) const {
  auto e = std::make_shared<Expr>();
  e->kind = k;
  e->line = line;
  return e;
}

// Jinja2's parse_tuple: a, b, c without brackets is a tuple.
ExprPtr ExprParser::tuple_expr(bool with_condexpr) {
  const int line = cur().line;
  ExprPtr first = expr(with_condexpr);
  if (!is_op(",")) return first;
  auto t = std::make_shared<Expr>();
  t->kind = Expr::Tuple;
  t->line = line;
  t->args.push_back(first);
  while (skip_op(",")) {
    if (cur().kind == Token::BlockEnd || cur().kind == Token::VarEnd || is_op(")")) break;
    t->args.push_back(expr(with_condexpr));
  }
  return t;
}

ExprPtr ExprParser::expr(bool with_condexpr) {
  ExprPtr e = or_expr();
  while (with_condexpr && is_name("if")) {
    const int line = cur().line;
    ++i_;
    auto c = std::make_shared<Expr>();
    c->kind = Expr::Cond;
    c->line = line;
    c->a = or_expr();
    c->b = e;
    if (skip_name("else")) c->c = expr(true);
    e = c;
  }
  return e;
}

ExprPtr ExprParser::binary(const std::string& op, ExprPtr l, ExprPtr r, int line) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Binary;
  e->line = line;
  e->name = op;
  e->a = std::move(l);
  e->b = std::move(r);
  return e;
}

ExprPtr ExprParser::or_expr() {
  ExprPtr e = and_expr();
  while (is_name("or")) {
    const int line = cur().line;
    ++i_;
    e = binary("or", e, and_expr(), line);
  }
  return e;
}

ExprPtr ExprParser::and_expr() {
  ExprPtr e = not_expr();
  while (is_name("and")) {
    const int line = cur().line;
    ++i_;
    e = binary("and", e, not_expr(), line);
  }
  return e;
}

ExprPtr ExprParser::not_expr() {
  if (is_name("not")) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Unary;
    e->line = cur().line;
    e->name = "not";
    ++i_;
    e->a = not_expr();
    return e;
  }
  return compare();
}

ExprPtr ExprParser::compare() {
  const int line = cur().line;
  ExprPtr first = math1();
  std::shared_ptr<Expr> c;
  while (true) {
    std::string op;
    if (cur().kind == Token::Op &&
        (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == "<=" || cur().text == ">" ||
         cur().text == ">=")) {
      op = cur().text;
      ++i_;
    } else if (is_name("in")) {
      op = "in";
      ++i_;
    } else if (is_name("not") && peek().kind == Token::Name && peek().text == "in") {
      op = "not in";
      i_ += 2;
    } else {
      break;
    }
    if (!c) {
      c = std::make_shared<Expr>();
      c->kind = Expr::Compare;
      c->line = line;
      c->a = first;
    }
    c->ops.push_back(op);
    c->args.push_back(math1());
  }
  return c ? ExprPtr(c) : first;
}

ExprPtr ExprParser::math1() {
  ExprPtr e = concat();
  while (is_op("+") || is_op("-")) {
    const std::string op = cur().text;
    const int line = cur().line;
    ++i_;
    e = binary(op, e, concat(), line);
  }
  return e;
}

ExprPtr ExprParser::concat() {
  ExprPtr e = math2();
  while (is_op("~")) {
    const int line = cur().line;
    ++i_;
    e = binary("~", e, math2(), line);
  }
  return e;
}

ExprPtr ExprParser::math2() {
  ExprPtr e = pow_expr();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const std::string op = cur().text;
    const int line = cur().line;
    ++i_;
    e = binary(op, e, pow_expr(), line);
  }
  return e;
}

ExprPtr ExprParser::pow_expr() {
  ExprPtr e = unary(true);
  while (is_op("**")) {
    const int line = cur().line;
    ++i_;
    e = binary("**", e, unary(true), line);
  }
  return e;
}

ExprPtr ExprParser::unary(bool with_filter) {
  ExprPtr e;
  if (is_op("-") || is_op("+")) {
    auto u = std::make_shared<Expr>();
    u->kind = Expr::Unary;
    u->line = cur().line;
    u->name = cur().text;
    ++i_;
    u->a = unary(false);
    e = u;
  } else {
    e = primary();
  }
  e = postfix(e);
  return with_filter ? filter_expr(e) : e;
}

ExprPtr ExprParser::primary() {
  const Token& tk = cur();
  const int line = tk.line;
  if (tk.kind == Token::Name) {
    ++i_;
    auto lit = [&](Value v) {
      auto e = make(Expr::Literal, line);
      std::const_pointer_cast<Expr>(e)->value = std::move(v);
      return e;
    };
    if (tk.text == "true" || tk.text == "True") return lit(Value(true));
    if (tk.text == "false" || tk.text == "False") return lit(Value(false));
    if (tk.text == "none" || tk.text == "None") return lit(Value::none());
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Name;
    e->line = line;
    e->name = tk.text;
    note_name(tk.text, true);
    return e;
  }
  if (tk.kind == Token::String) {
    std::string s;
    while (cur().kind == Token::String) s += t_[i_++].text;  // adjacent literals join
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Literal;
    e->line = line;
    e->value = Value(std::move(s));
    return e;
  }
  if (tk.kind == Token::Int || tk.kind == Token::Float) {
    ++i_;
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Literal;
    e->line = line;
    try {
      e->value = tk.kind == Token::Int ? Value(int64_t(std::stoll(tk.text))) : Value(std::stod(tk.text));
    } catch (const std::exception&) {
      fail("number out of range: " + tk.text);
    }
    return e;
  }
  if (skip_op("(")) {
    if (skip_op(")")) {
      auto e = std::make_shared<Expr>();
      e->kind = Expr::Tuple;
      e->line = line;
      return e;
    }
    ExprPtr inner = tuple_expr(true);
    expect_op(")");
    return inner;
  }
  if (skip_op("[")) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::List;
    e->line = line;
    while (!skip_op("]")) {
      if (!e->args.empty()) expect_op(",");
      if (skip_op("]")) break;
      e->args.push_back(expr());
    }
    return e;
  }
  if (skip_op("{")) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Dict;
    e->line = line;
    while (!skip_op("}")) {
      if (!e->dict_keys.empty()) expect_op(",");
      if (skip_op("}")) break;
      e->dict_keys.push_back(expr());
      expect_op(":");
      e->args.push_back(expr());
    }
    return e;
  }
  fail("expected an expression" + near());
}

ExprPtr ExprParser::postfix(ExprPtr e) {
  while (true) {
    const int line = cur().line;
    if (skip_op(".")) {
      auto a = std::make_shared<Expr>();
      a->line = line;
      a->a = e;
      if (cur().kind == Token::Int) {  // x.0 is x[0]
        a->kind = Expr::Item;
        auto idx = std::make_shared<Expr>();
        idx->kind = Expr::Literal;
        idx->value = Value(int64_t(std::stoll(t_[i_++].text)));
        a->b = idx;
      } else {
        a->kind = Expr::Attr;
        a->name = name();
      }
      e = a;
    } else if (skip_op("[")) {
      e = subscript(e, line);
    } else if (is_op("(")) {
      e = call(e);
    } else {
      return e;
    }
  }
}

ExprPtr ExprParser::subscript(ExprPtr obj, int line) {
  auto s = std::make_shared<Expr>();
  s->line = line;
  s->a = obj;
  ExprPtr first;
  if (!is_op(":")) {
    first = expr();
    if (skip_op("]")) {
      s->kind = Expr::Item;
      s->b = first;
      return s;
    }
  }
  s->kind = Expr::Slice;
  s->b = first;
  expect_op(":");
  if (!is_op(":") && !is_op("]")) s->c = expr();
  if (skip_op(":") && !is_op("]")) s->d = expr();
  expect_op("]");
  return s;
}

// Call arguments into e, as Jinja2's parse_call_args takes them: positions, then keywords and
// one *iterable (no position after either), then one **mapping (nothing after it).
void ExprParser::arguments(Expr& e) {
  const int line = cur().line;
  auto ensure = [&](bool ok) {
    if (!ok) throw TemplateError("invalid syntax for function call expression", line);
  };
  expect_op("(");
  bool comma = false;
  while (!skip_op(")")) {
    if (comma) {
      expect_op(",");
      if (skip_op(")")) break;
    }
    comma = true;
    if (skip_op("*")) {
      ensure(!e.star && !e.dstar);
      e.star = expr();
    } else if (skip_op("**")) {
      ensure(!e.dstar);
      e.dstar = expr();
    } else if (cur().kind == Token::Name && peek().kind == Token::Op && peek().text == "=") {
      ensure(!e.dstar);
      std::string k = name();
      ++i_;
      for (const auto& kw : e.kwargs)
        if (kw.first == k) throw TemplateError("keyword argument repeated: " + k, line);
      e.kwargs.emplace_back(std::move(k), expr());
    } else {
      ensure(!e.star && !e.dstar && e.kwargs.empty());
      e.args.push_back(expr());
    }
  }
}

ExprPtr ExprParser::call(ExprPtr callee) {
  auto c = std::make_shared<Expr>();
  c->kind = Expr::Call;
  c->line = cur().line;
  c->a = callee;
  arguments(*c);
  calls_.push_back(c);
  return c;
}

ExprPtr ExprParser::filter_expr(ExprPtr e) {
  while (true) {
    if (is_op("|")) {
      e = filter_chain(e, true, /*one=*/true);
    } else if (is_name("is")) {
      e = test(e);
    } else if (is_op("(")) {
      e = call(e);
    } else {
      return e;
    }
  }
}

std::string ExprParser::dotted_name() {
  std::string n = name();
  while (is_op(".") && peek().kind == Token::Name) {
    ++i_;
    n += "." + name();
  }
  return n;
}

// | f(args) | g ... applied to `input` (null: a {% filter %} block's body).
ExprPtr ExprParser::filter_chain(ExprPtr input, bool leading_pipe, bool one) {
  ExprPtr e = input;
  bool first = true;
  while (true) {
    if (leading_pipe || !first) {
      if (!skip_op("|")) return e;
    }
    first = false;
    auto f = std::make_shared<Expr>();
    f->kind = Expr::Filter;
    f->line = cur().line;
    f->name = dotted_name();
    if (!is_filter(f->name)) fail("unknown filter '" + f->name + "'");
    if (is_op("(")) arguments(*f);
    f->a = e;
    e = f;
    if (one) return e;
  }
}

ExprPtr ExprParser::test(ExprPtr operand) {
  auto t = std::make_shared<Expr>();
  t->kind = Expr::Test;
  t->line = cur().line;
  ++i_;  // is
  t->negated = skip_name("not");
  t->a = operand;
  t->name = dotted_name();
  if (!is_test(t->name)) fail("unknown test '" + t->name + "'");
  if (is_op("(")) {
    arguments(*t);
  } else if ((cur().kind == Token::Name && !is_name("else") && !is_name("or") && !is_name("and")) ||
             cur().kind == Token::String || cur().kind == Token::Int || cur().kind == Token::Float ||
             is_op("(") || is_op("[") || is_op("{")) {
    t->args.push_back(postfix(primary()));
  }
  return t;
}

// Calls of a plain name must reach a global, a macro or a variable the template sets; method
// calls must name a method of str, dict, list or loop.
void ExprParser::check_calls(const Body&) {
  for (const auto& c : calls_) {
    const Expr& f = *c->a;
    if (f.kind == Expr::Name) {
      if (!is_global(f.name) && !defined_.count(f.name) && f.name != "caller")
        throw TemplateError(f.name == "loop" ? "recursive loop() calls are not supported"
                                             : "unknown function '" + f.name + "'",
                            c->line);
    } else if (f.kind == Expr::Attr && !is_method(f.name) && !defined_.count(f.name)) {
      throw TemplateError("unknown method '." + f.name + "()'", c->line);
    }
  }
}

}  // namespace exspec::jinja::detail
