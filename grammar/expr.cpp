#include "grammar/expr.h"

#include <cstdio>

#include "grammar/budget.h"

namespace exspec::grammar {
namespace {

std::shared_ptr<Expr> make(Expr::Kind k) {
  auto e = std::make_shared<Expr>();
  e->kind = k;
  return e;
}

void flatten(Expr::Kind k, std::vector<ExprPtr>& out, ExprPtr e) {
  if (e->kind == k) {
    for (const ExprPtr& i : e->items) out.push_back(i);
  } else {
    out.push_back(std::move(e));
  }
}

std::string escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string code(uint32_t c) {
  char buf[16];
  if (c >= 0x20 && c < 0x7F && c != ']' && c != '\\' && c != '-' && c != '^') return std::string(1, static_cast<char>(c));
  std::snprintf(buf, sizeof buf, c > 0xFFFF ? "\\U%08X" : "\\u%04X", c);
  return buf;
}

std::string text(const Expr& e, const Grammar& g) {
  switch (e.kind) {
    case Expr::Kind::Empty: return "\"\"";
    case Expr::Kind::Nothing: return "[]";
    case Expr::Kind::Literal: return "\"" + escape(e.bytes) + "\"";
    case Expr::Kind::Chars: {
      std::string s = "[";
      for (const CodeRange& r : e.chars.ranges()) s += r.lo == r.hi ? code(r.lo) : code(r.lo) + "-" + code(r.hi);
      return s + "]";
    }
    case Expr::Kind::Seq:
    case Expr::Kind::Alt: {
      std::string s = "(";
      for (size_t i = 0; i < e.items.size(); ++i) {
        if (i) s += e.kind == Expr::Kind::Seq ? " " : " | ";
        s += text(*e.items[i], g);
      }
      return s + ")";
    }
    case Expr::Kind::Repeat:
      return text(*e.items[0], g) + "{" + std::to_string(e.min) + "," + (e.max < 0 ? "" : std::to_string(e.max)) + "}";
    case Expr::Kind::Ref: return g.rules.at(static_cast<size_t>(e.rule)).name;
    case Expr::Kind::And: return "(" + text(*e.items[0], g) + " & " + text(*e.items[1], g) + ")";
    case Expr::Kind::Diff: return "(" + text(*e.items[0], g) + " - " + text(*e.items[1], g) + ")";
    case Expr::Kind::Graph: return "<graph of " + std::to_string(e.graph_edges.size()) + " edges>";
  }
  return "?";
}

}  // namespace

ExprPtr empty() { return make(Expr::Kind::Empty); }
ExprPtr nothing() { return make(Expr::Kind::Nothing); }

ExprPtr lit(std::string bytes) {
  if (bytes.empty()) return empty();
  auto e = make(Expr::Kind::Literal);
  e->bytes = std::move(bytes);
  return e;
}

ExprPtr chars(CharSet set) {
  if (set.empty()) return nothing();
  auto e = make(Expr::Kind::Chars);
  e->chars = std::move(set);
  return e;
}

ExprPtr seq(std::vector<ExprPtr> items) {
  std::vector<ExprPtr> flat;
  for (ExprPtr& i : items) {
    if (i->kind == Expr::Kind::Nothing) return nothing();
    if (i->kind != Expr::Kind::Empty) flatten(Expr::Kind::Seq, flat, std::move(i));
  }
  if (flat.empty()) return empty();
  if (flat.size() == 1) return flat[0];
  auto e = make(Expr::Kind::Seq);
  e->items = std::move(flat);
  return e;
}

ExprPtr alt(std::vector<ExprPtr> items) {
  std::vector<ExprPtr> flat;
  for (ExprPtr& i : items)
    if (i->kind != Expr::Kind::Nothing) flatten(Expr::Kind::Alt, flat, std::move(i));
  if (flat.empty()) return nothing();
  if (flat.size() == 1) return flat[0];
  auto e = make(Expr::Kind::Alt);
  e->items = std::move(flat);
  return e;
}

ExprPtr repeat(ExprPtr x, int min, int max) {
  if (max == 0 || x->kind == Expr::Kind::Empty) return empty();
  if (x->kind == Expr::Kind::Nothing) return min == 0 ? empty() : nothing();
  if (min == 1 && max == 1) return x;
  auto e = make(Expr::Kind::Repeat);
  e->items = {std::move(x)};
  e->min = min;
  e->max = max;
  return e;
}

ExprPtr ref(int rule) {
  auto e = make(Expr::Kind::Ref);
  e->rule = rule;
  return e;
}

ExprPtr both(ExprPtr a, ExprPtr b) {
  auto e = make(Expr::Kind::And);
  e->items = {std::move(a), std::move(b)};
  return e;
}

ExprPtr minus(ExprPtr a, ExprPtr b) {
  auto e = make(Expr::Kind::Diff);
  e->items = {std::move(a), std::move(b)};
  return e;
}

ExprPtr graph(int states, int start, std::vector<int> finals, std::vector<Expr::GraphEdge> edges) {
  auto e = make(Expr::Kind::Graph);
  e->graph_states = states;
  e->graph_start = start;
  e->graph_finals = std::move(finals);
  e->graph_edges = std::move(edges);
  return e;
}

bool has_refs(const Expr& e) {
  if (e.kind == Expr::Kind::Ref) return true;
  for (const ExprPtr& i : e.items)
    if (has_refs(*i)) return true;
  for (const Expr::GraphEdge& g : e.graph_edges)
    if (g.label && has_refs(*g.label)) return true;
  return false;
}

ExprPtr map_refs(const ExprPtr& e, const std::function<ExprPtr(int)>& f) {
  check_budget();
  if (e->kind == Expr::Kind::Ref) {
    ExprPtr r = f(e->rule);
    return r ? r : e;
  }
  if (e->items.empty() && e->graph_edges.empty()) return e;
  auto copy = std::make_shared<Expr>(*e);
  bool changed = false;
  for (ExprPtr& i : copy->items) {
    ExprPtr m = map_refs(i, f);
    changed |= m != i;
    i = m;
  }
  for (Expr::GraphEdge& g : copy->graph_edges) {
    if (!g.label) continue;
    ExprPtr m = map_refs(g.label, f);
    changed |= m != g.label;
    g.label = m;
  }
  return changed ? copy : e;
}

std::string to_text(const Grammar& g) {
  std::string out;
  for (size_t i = 0; i < g.rules.size(); ++i)
    out += (static_cast<int>(i) == g.root ? "(root) " : "") + g.rules[i].name + " ::= " +
           (g.rules[i].body ? text(*g.rules[i].body, g) : "<undefined>") + "\n";
  return out;
}

}  // namespace exspec::grammar
