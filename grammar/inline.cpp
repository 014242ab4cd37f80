// inline_rules (gbnf.h): references to small rules that are not recursive become their bodies.
#include <algorithm>
#include <functional>
#include <set>

#include "grammar/budget.h"
#include "grammar/gbnf.h"

namespace exspec::grammar {
namespace {

void collect_refs(const Expr& e, std::set<int>& out) {
  if (e.kind == Expr::Kind::Ref) out.insert(e.rule);
  for (const ExprPtr& i : e.items) collect_refs(*i, out);
  for (const Expr::GraphEdge& g : e.graph_edges)
    if (g.label) collect_refs(*g.label, out);
}

size_t tree_size(const Expr& e, const std::function<size_t(int)>& ref_size) {
  check_budget();
  if (e.kind == Expr::Kind::Ref) return ref_size(e.rule);
  size_t n = 1 + (e.kind == Expr::Kind::Literal ? e.bytes.size() : 0) + (e.kind == Expr::Kind::Chars ? e.chars.ranges().size() : 0);
  constexpr size_t kHuge = size_t{1} << 40;  // saturates: nested counts must not wrap around to "small"
  for (const ExprPtr& i : e.items)
    n = std::min(kHuge, n + std::min(kHuge, tree_size(*i, ref_size)) * (e.kind == Expr::Kind::Repeat ? static_cast<size_t>(std::max(1, e.max < 0 ? e.min + 1 : e.max)) : 1));
  for (const Expr::GraphEdge& g : e.graph_edges)
    if (g.label) n += tree_size(*g.label, ref_size);
  return n;
}

// Rules on a cycle of references (Tarjan's strongly connected components).
std::vector<bool> recursive_rules(const std::vector<std::set<int>>& refs) {
  const int n = static_cast<int>(refs.size());
  std::vector<int> index(n, -1), low(n, 0), stack;
  std::vector<bool> on(n, false), rec(n, false);
  int counter = 0;
  std::function<void(int)> visit = [&](int v) {
    index[v] = low[v] = counter++;
    stack.push_back(v);
    on[v] = true;
    for (int w : refs[v]) {
      if (index[w] < 0) visit(w), low[v] = std::min(low[v], low[w]);
      else if (on[w]) low[v] = std::min(low[v], index[w]);
    }
    if (low[v] != index[v]) return;
    std::vector<int> scc;
    int w;
    do {
      w = stack.back();
      stack.pop_back();
      on[w] = false;
      scc.push_back(w);
    } while (w != v);
    for (int x : scc) rec[x] = scc.size() > 1 || refs[x].count(x);
  };
  for (int v = 0; v < n; ++v)
    if (index[v] < 0) visit(v);
  return rec;
}

}  // namespace

Grammar inline_rules(const Grammar& g, size_t max_inlined_size) {
  const size_t n = g.rules.size();
  std::vector<std::set<int>> refs(n);
  for (size_t r = 0; r < n; ++r)
    if (g.rules[r].body) collect_refs(*g.rules[r].body, refs[r]);
  const std::vector<bool> rec = recursive_rules(refs);
  std::vector<size_t> size(n, 0);
  std::vector<char> sized(n, 0), inlinable(n, 0);
  std::function<size_t(int)> expanded = [&](int r) -> size_t {
    const auto k = static_cast<size_t>(r);
    if (rec[k] || g.rules[k].shared || !g.rules[k].body) return 1;
    if (!sized[k]) {
      size[k] = tree_size(*g.rules[k].body, expanded);
      sized[k] = 1;
      inlinable[k] = r != g.root && size[k] <= max_inlined_size;
    }
    return inlinable[k] ? size[k] : 1;
  };
  std::vector<ExprPtr> body(n);
  std::function<ExprPtr(int)> inlined = [&](int r) -> ExprPtr {
    const auto k = static_cast<size_t>(r);
    if (!body[k]) body[k] = map_refs(g.rules[k].body, [&](int c) { return expanded(c) && inlinable[static_cast<size_t>(c)] ? inlined(c) : nullptr; });
    return body[k];
  };
  // Keep what the root reaches through the references that remain.
  std::vector<int> id(n, -1), order{g.root};
  id[static_cast<size_t>(g.root)] = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    std::set<int> left;
    collect_refs(*inlined(order[i]), left);
    for (int c : left)
      if (id[static_cast<size_t>(c)] < 0) id[static_cast<size_t>(c)] = static_cast<int>(order.size()), order.push_back(c);
  }
  Grammar out;
  for (int r : order) {
    const Rule& src = g.rules[static_cast<size_t>(r)];
    out.add(src.name, map_refs(inlined(r), [&](int c) { return ref(id[static_cast<size_t>(c)]); }), src.shared);
  }
  out.root = 0;
  return out;
}

}  // namespace exspec::grammar
