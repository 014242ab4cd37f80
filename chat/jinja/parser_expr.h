// Internal to the parser: the token cursor and the expression grammar (Jinja2's precedence:
// or, and, not, comparisons, + -, ~, * / // %, **, unary, then postfix .attr [item] (call),
// | filter and is test), which the statement parser builds on.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/lexer.h"

namespace exspec::jinja::detail {

class ExprParser {
 public:
  explicit ExprParser(const std::vector<Token>& t) : t_(t) {}

 protected:
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

  // Jinja2's parse_tuple: a, b, c without brackets is a tuple.
  ExprPtr tuple_expr(bool with_condexpr);
  ExprPtr expr(bool with_condexpr = true);
  // | f(args) | g ... applied to `input` (null: a {% filter %} block's body).
  ExprPtr filter_chain(ExprPtr input, bool leading_pipe = true, bool one = false);
  std::vector<std::string> targets();
  std::vector<Param> params();
  // Calls of a plain name must reach a global, a macro or a variable the template sets; method
  // calls must name a method of str, dict, list or loop.
  void check_calls(const Body&);

  const std::vector<Token>& t_;
  size_t i_ = 0;
  int loops_ = 0;
  std::set<std::string> defined_;  // names the template binds: set, for, macro, parameters
  std::vector<std::shared_ptr<Expr>> calls_;
  // Per open macro / call block: the names its body uses, first use a load (true) or a store.
  std::vector<std::map<std::string, bool>> macro_names_;
  void note_name(const std::string& n, bool load) {
    for (auto& m : macro_names_) m.emplace(n, load);
  }

 private:
  ExprPtr make(Expr::Kind k, int line) const;
  ExprPtr binary(const std::string& op, ExprPtr l, ExprPtr r, int line);
  ExprPtr or_expr();
  ExprPtr and_expr();
  ExprPtr not_expr();
  ExprPtr compare();
  ExprPtr math1();
  ExprPtr concat();
  ExprPtr math2();
  ExprPtr pow_expr();
  ExprPtr unary(bool with_filter);
  ExprPtr primary();
  ExprPtr postfix(ExprPtr e);
  ExprPtr subscript(ExprPtr obj, int line);
  // Call arguments into e: (pos..., name=value...).
  void arguments(Expr& e);
  ExprPtr call(ExprPtr callee);
  ExprPtr filter_expr(ExprPtr e);
  std::string dotted_name();
  ExprPtr test(ExprPtr operand);
};

}  // namespace exspec::jinja::detail
