#include "http/jinja/parser.h"

#include <set>

#include "http/jinja/builtins.h"

namespace exspec::jinja {
namespace {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& t) : t_(t) {}

  Body run() {
    Body b = body({});
    if (cur().kind != Token::End) fail("unexpected {% " + end_tag_ + " %}");
    check_calls(b);
    return b;
  }

 private:
  const Token& cur() const { return t_[i_]; }
  const Token& peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  [[noreturn]] void fail(const std::string& what) const { throw TemplateError(what, cur().line); }
  bool is_op(const char* op) const { return cur().kind == Token::Op && cur().text == op; }
  bool is_name(const char* n) const { return cur().kind == Token::Name && cur().text == n; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    ++i_;
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    ++i_;
    return true;
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail(std::string("expected '") + op + "'" + near());
  }
  std::string near() const {
    switch (cur().kind) {
      case Token::BlockEnd: return " before '%}'";
      case Token::VarEnd: return " before '}}'";
      case Token::End: return " at the end of the template";
      default: return " near '" + cur().text + "'";
    }
  }
  std::string name() {
    if (cur().kind != Token::Name) fail("expected a name" + near());
    return t_[i_++].text;
  }
  void end_block() {
    if (cur().kind != Token::BlockEnd) fail("expected '%}'" + near());
    ++i_;
  }

  // Statements up to a block tag named in `ends` (left unread: end_tag_ names it).
  Body body(const std::set<std::string>& ends) {
    Body out;
    while (true) {
      const Token& tk = cur();
      if (tk.kind == Token::End) {
        if (!ends.empty()) fail("unclosed block: expected {% " + *ends.rbegin() + " %} before the end of the template");
        return out;
      }
      if (tk.kind == Token::Text) {
        out.push_back(std::make_shared<Stmt>(Stmt{Stmt::Text, tk.line, tk.text}));
        ++i_;
      } else if (tk.kind == Token::VarBegin) {
        ++i_;
        auto s = std::make_shared<Stmt>(Stmt{Stmt::Output, tk.line});
        s->expr = tuple_expr(true);
        if (cur().kind != Token::VarEnd) fail("expected '}}'" + near());
        ++i_;
        out.push_back(s);
      } else if (tk.kind == Token::BlockBegin) {
        if (peek().kind == Token::Name && ends.count(peek().text)) {
          end_tag_ = peek().text;
          ++i_;
          return out;
        }
        ++i_;
        out.push_back(statement());
      } else {
        fail("unexpected token");
      }
    }
  }

  // After the closing tag's name: consumes the rest of the tag.
  void close(const std::string& tag) {
    ++i_;  // the tag's name
    (void)tag;
    end_block();
  }

  StmtPtr statement() {
    const int line = cur().line;
    if (cur().kind != Token::Name) fail("expected a statement name after '{%'");
    const std::string kw = name();
    auto s = std::make_shared<Stmt>(Stmt{Stmt::Text, line});
    if (kw == "if") {
      s->kind = Stmt::If;
      ExprPtr cond = expr();
      end_block();
      while (true) {
        Body b = body({"elif", "else", "endif"});
        s->branches.emplace_back(cond, std::move(b));
        if (end_tag_ == "elif") {
          ++i_;
          cond = expr();
          end_block();
          continue;
        }
        if (end_tag_ == "else") {
          close("else");
          s->else_body = body({"endif"});
        }
        close("endif");
        return s;
      }
    }
    if (kw == "for") {
      s->kind = Stmt::For;
      s->targets = targets();
      if (!skip_name("in")) fail("expected 'in' in the for loop" + near());
      s->expr = tuple_expr(false);
      if (skip_name("if")) s->cond = expr(false);
      if (is_name("recursive")) fail("recursive for loops are not supported");
      end_block();
      ++loops_;
      s->body = body({"else", "endfor"});
      --loops_;
      if (end_tag_ == "else") {
        close("else");
        s->else_body = body({"endfor"});
      }
      close("endfor");
      return s;
    }
    if (kw == "set") {
      s->targets = targets();
      if (skip_op(".")) {
        if (s->targets.size() != 1) fail("expected '=' in set");
        s->is_attr = true;
        s->targets.push_back(name());
      }
      if (skip_op("=")) {
        s->kind = Stmt::Set;
        s->expr = tuple_expr(true);
        end_block();
        return s;
      }
      if (s->targets.size() != 1 || s->is_attr) fail("a block set takes one name");
      s->kind = Stmt::SetBlock;
      if (is_op("|")) s->expr = filter_chain(nullptr);
      end_block();
      s->body = body({"endset"});
      close("endset");
      return s;
    }
    if (kw == "macro") {
      s->kind = Stmt::Macro;
      s->text = name();
      defined_.insert(s->text);
      s->params = params();
      end_block();
      s->body = body({"endmacro"});
      close("endmacro");
      return s;
    }
    if (kw == "call") {
      s->kind = Stmt::CallBlock;
      if (is_op("(")) s->params = params();
      s->expr = expr();
      if (s->expr->kind != Expr::Call) fail("expected a macro call in {% call %}");
      end_block();
      s->body = body({"endcall"});
      close("endcall");
      return s;
    }
    if (kw == "filter") {
      s->kind = Stmt::FilterBlock;
      s->expr = filter_chain(nullptr, /*leading_pipe=*/false);
      end_block();
      s->body = body({"endfilter"});
      close("endfilter");
      return s;
    }
    if (kw == "with") {
      s->kind = Stmt::With;
      while (cur().kind != Token::BlockEnd) {
        if (!s->targets.empty()) expect_op(",");
        s->targets.push_back(name());
        expect_op("=");
        s->values.push_back(expr());
      }
      end_block();
      s->body = body({"endwith"});
      close("endwith");
      return s;
    }
    if (kw == "break" || kw == "continue") {
      if (loops_ == 0) fail("{% " + kw + " %} outside a for loop");
      s->kind = kw == "break" ? Stmt::Break : Stmt::Continue;
      end_block();
      return s;
    }
    if (kw == "generation") {  // transformers' AssistantTracker: marks the assistant's text
      s->kind = Stmt::Scope;
      end_block();
      s->body = body({"endgeneration"});
      close("endgeneration");
      return s;
    }
    --i_;
    fail("unsupported construct {% " + kw + " %}");
  }

  std::vector<std::string> targets() {
    std::vector<std::string> out;
    const bool paren = skip_op("(");
    out.push_back(name());
    while (skip_op(",")) out.push_back(name());
    if (paren) expect_op(")");
    for (const auto& n : out) defined_.insert(n);
    return out;
  }

  std::vector<Param> params() {
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

  ExprPtr make(Expr::Kind k, int line) const {
    auto e = std::make_shared<Expr>();
    e->kind = k;
    e->line = line;
    return e;
  }

  // Jinja2's parse_tuple: a, b, c without brackets is a tuple.
  ExprPtr tuple_expr(bool with_condexpr) {
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

  ExprPtr expr(bool with_condexpr = true) {
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

  ExprPtr binary(const std::string& op, ExprPtr l, ExprPtr r, int line) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Binary;
    e->line = line;
    e->name = op;
    e->a = std::move(l);
    e->b = std::move(r);
    return e;
  }

  ExprPtr or_expr() {
    ExprPtr e = and_expr();
    while (is_name("or")) {
      const int line = cur().line;
      ++i_;
      e = binary("or", e, and_expr(), line);
    }
    return e;
  }

  ExprPtr and_expr() {
    ExprPtr e = not_expr();
    while (is_name("and")) {
      const int line = cur().line;
      ++i_;
      e = binary("and", e, not_expr(), line);
    }
    return e;
  }

  ExprPtr not_expr() {
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

  ExprPtr compare() {
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

  ExprPtr math1() {
    ExprPtr e = concat();
    while (is_op("+") || is_op("-")) {
      const std::string op = cur().text;
      const int line = cur().line;
      ++i_;
      e = binary(op, e, concat(), line);
    }
    return e;
  }

  ExprPtr concat() {
    ExprPtr e = math2();
    while (is_op("~")) {
      const int line = cur().line;
      ++i_;
      e = binary("~", e, math2(), line);
    }
    return e;
  }

  ExprPtr math2() {
    ExprPtr e = pow_expr();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const std::string op = cur().text;
      const int line = cur().line;
      ++i_;
      e = binary(op, e, pow_expr(), line);
    }
    return e;
  }

  ExprPtr pow_expr() {
    ExprPtr e = unary(true);
    while (is_op("**")) {
      const int line = cur().line;
      ++i_;
      e = binary("**", e, unary(true), line);
    }
    return e;
  }

  ExprPtr unary(bool with_filter) {
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

  ExprPtr primary() {
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

  ExprPtr postfix(ExprPtr e) {
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

  ExprPtr subscript(ExprPtr obj, int line) {
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

  // Call arguments into e: (pos..., name=value...).
  void arguments(Expr& e) {
    expect_op("(");
    while (!skip_op(")")) {
      if (!e.args.empty() || !e.kwargs.empty()) expect_op(",");
      if (skip_op(")")) break;
      if (is_op("*") || is_op("**")) fail("*args and **kwargs in calls are not supported");
      if (cur().kind == Token::Name && peek().kind == Token::Op && peek().text == "=") {
        std::string k = name();
        ++i_;
        e.kwargs.emplace_back(std::move(k), expr());
      } else {
        if (!e.kwargs.empty()) fail("a positional argument after a keyword argument");
        e.args.push_back(expr());
      }
    }
  }

  ExprPtr call(ExprPtr callee) {
    auto c = std::make_shared<Expr>();
    c->kind = Expr::Call;
    c->line = cur().line;
    c->a = callee;
    arguments(*c);
    calls_.push_back(c);
    return c;
  }

  ExprPtr filter_expr(ExprPtr e) {
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

  std::string dotted_name() {
    std::string n = name();
    while (is_op(".") && peek().kind == Token::Name) {
      ++i_;
      n += "." + name();
    }
    return n;
  }

  // | f(args) | g ... applied to `input` (null: a {% filter %} block's body).
  ExprPtr filter_chain(ExprPtr input, bool leading_pipe = true, bool one = false) {
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

  ExprPtr test(ExprPtr operand) {
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
  void check_calls(const Body&) {
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

  const std::vector<Token>& t_;
  size_t i_ = 0;
  std::string end_tag_;
  int loops_ = 0;
  std::set<std::string> defined_;  // names the template binds: set, for, macro, parameters
  std::vector<std::shared_ptr<Expr>> calls_;
};

}  // namespace

Body parse(const std::vector<Token>& tokens) { return Parser(tokens).run(); }

}  // namespace exspec::jinja
