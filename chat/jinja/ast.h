// The parsed template: expressions and statements as plain nodes (one struct each, the fields a
// kind uses named beside it), evaluated by interpreter.cpp.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja/value.h"

namespace exspec::jinja {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;
using Kwargs = std::vector<std::pair<std::string, ExprPtr>>;

struct Expr {
  enum Kind {
    Literal,   // value
    Name,      // name
    Attr,      // a.name
    Item,      // a[b]
    Slice,     // a[b:c:d], each of b c d may be null
    Call,      // a(args, kwargs)
    Filter,    // a | name(args, kwargs); a null: a {% filter %} block's input
    Test,      // a is [not: negated] name(args)
    Unary,     // op a: "-", "+", "not"
    Binary,    // a op b: + - * / // % ** ~ and or
    Compare,   // a ops[0] args[0] ops[1] args[1] ...: == != < <= > >= in "not in"
    Cond,      // b if a else c (c may be null)
    List,      // [args]
    Tuple,     // (args)
    Dict,      // {kwargs}: keys are literal strings (dict_keys holds key expressions)
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;  // Name, Attr, Call (no), Filter, Test; Unary/Binary: the operator
  ExprPtr a, b, c, d;
  std::vector<ExprPtr> args;
  Kwargs kwargs;
  std::vector<std::string> ops;
  std::vector<ExprPtr> dict_keys;
  ExprPtr star, dstar;  // Call, Filter, Test: f(*star, **dstar), spread as Python spreads them
  bool negated = false;
};

struct Stmt;
using StmtPtr = std::shared_ptr<const Stmt>;
using Body = std::vector<StmtPtr>;

struct Param {
  std::string name;
  ExprPtr dflt;  // null: required
};

struct Stmt {
  enum Kind {
    Text,      // text
    Output,    // {{ expr }}
    If,        // branches (cond, body) ..., else_body
    For,       // for targets in expr [if cond] body [else else_body]
    Set,       // set targets = expr; attr set: targets {ns, attr} with is_attr
    SetBlock,  // set targets[0] [| filter] %} body {% endset
    Macro,     // macro name(params) body
    CallBlock, // call(params) expr (a Call) body: the body is `caller`
    FilterBlock,  // filter expr (a Filter chain over null) body
    With,      // with targets[i] = values[i] body
    Break,
    Continue,
    Scope,     // a body that only groups (generation blocks: Hugging Face's assistant tracker)
  };
  Kind kind;
  int line = 0;
  std::string text;
  ExprPtr expr, cond;
  std::vector<std::string> targets;
  std::vector<ExprPtr> values;
  bool is_attr = false;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body, else_body;
  std::vector<Param> params;
  // Macro, CallBlock: what the body reads without setting it first (Jinja2's find_undeclared):
  // only then does a call take extra keywords (kwargs), extra positions (varargs) or a caller.
  bool catch_kwargs = false, catch_varargs = false, catch_caller = false;
};

}  // namespace exspec::jinja
