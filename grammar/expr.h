// The grammar IR every front end (JSON Schema, regular expression, choice, GBNF) produces: rules
// whose bodies are expressions over bytes, Unicode character sets and references to rules.
// Regular operators only; context-freedom comes from references (recursion). build_automaton
// (automaton.h) turns a Grammar into the byte-level pushdown automaton the matcher walks.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "grammar/charset.h"

namespace exspec::grammar {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind {
    Empty,    // the empty string
    Nothing,  // no string at all
    Literal,  // bytes
    Chars,    // one character of chars (UTF-8)
    Seq,      // items in order
    Alt,      // one of items
    Repeat,   // items[0] between min and max times (max < 0: unbounded)
    Ref,      // the language of rule `rule`
    And,      // strings of both items[0] and items[1] (both free of references)
    Diff,     // strings of items[0] that are not strings of items[1] (both free of references)
    Graph,    // a small automaton whose edges carry expressions (see GraphEdge)
  };
  struct GraphEdge {
    int from, to;
    ExprPtr label;  // nullptr: an empty move
  };
  Kind kind = Kind::Empty;
  std::string bytes;
  CharSet chars;
  std::vector<ExprPtr> items;
  int min = 0, max = -1;
  int rule = -1;
  // Graph: states 0..graph_states-1, from graph_start to any of graph_finals.
  int graph_states = 0, graph_start = 0;
  std::vector<int> graph_finals;
  std::vector<GraphEdge> graph_edges;
};

ExprPtr empty();
ExprPtr nothing();
ExprPtr lit(std::string bytes);
ExprPtr chars(CharSet set);
ExprPtr seq(std::vector<ExprPtr> items);
ExprPtr alt(std::vector<ExprPtr> items);
ExprPtr repeat(ExprPtr e, int min, int max);
inline ExprPtr opt(ExprPtr e) { return repeat(std::move(e), 0, 1); }
inline ExprPtr star(ExprPtr e) { return repeat(std::move(e), 0, -1); }
inline ExprPtr plus(ExprPtr e) { return repeat(std::move(e), 1, -1); }
ExprPtr ref(int rule);
ExprPtr both(ExprPtr a, ExprPtr b);
ExprPtr minus(ExprPtr a, ExprPtr b);
ExprPtr graph(int states, int start, std::vector<int> finals, std::vector<Expr::GraphEdge> edges);

bool has_refs(const Expr& e);
// e with every reference replaced by f(rule) (nullptr: kept); unchanged subtrees are shared.
ExprPtr map_refs(const ExprPtr& e, const std::function<ExprPtr(int)>& f);

struct Rule {
  std::string name;
  ExprPtr body;
  // A rule the matcher keeps as a rule of its own even where it could be inlined: its token sets
  // are computed once and shared by every reference (a JSON string, a number).
  bool shared = false;
};

struct Grammar {
  std::vector<Rule> rules;
  int root = 0;
  int add(std::string name, ExprPtr body = nullptr, bool shared = false) {
    rules.push_back(Rule{std::move(name), std::move(body), shared});
    return static_cast<int>(rules.size()) - 1;
  }
};

// The grammar as GBNF-like text (debugging and tests).
std::string to_text(const Grammar& g);

}  // namespace exspec::grammar
