#include "grammar/automaton.h"

#include <algorithm>
#include <map>

#include "grammar/budget.h"
#include "grammar/error.h"
#include "grammar/thompson.h"

namespace exspec::grammar {
namespace {

std::vector<Dfa> rule_dfas(const Grammar& g, const AutomatonLimits& lim) {
  std::vector<Dfa> dfas;
  for (const Rule& r : g.rules) {
    if (!r.body) throw GrammarError(r.name, "rule " + r.name, "rule '" + r.name + "' is referenced but not defined");
    // Counted before it is built (a product of nested counts that the front end did not see).
    const size_t limit = 4 * lim.max_states_per_rule;
    if (const size_t states = nfa_states_at_least(*r.body, limit + 1); states > limit)
      throw GrammarError("size", "rule " + r.name, "the grammar is too large: rule '" + r.name + "' would need at least " +
                                                       std::to_string(states) + " automaton states, more than the limit of " +
                                                       std::to_string(limit));
    dfas.push_back(minimize(determinize(build_nfa(*r.body, limit), lim.max_states_per_rule)));
  }
  return dfas;
}

std::vector<bool> productive_rules(const std::vector<Dfa>& dfas) {
  std::vector<bool> p(dfas.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < dfas.size(); ++r) {
      check_budget();
      if (!p[r] && accepts_something(dfas[r], p)) p[r] = changed = true;
    }
  }
  return p;
}

// Rules that match the empty string.
std::vector<bool> nullable_rules(const std::vector<Dfa>& dfas, const std::vector<bool>& live) {
  std::vector<bool> n(dfas.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < dfas.size(); ++r) {
      if (n[r] || !live[r]) continue;
      std::vector<uint32_t> todo{dfas[r].start};
      std::vector<char> seen(dfas[r].states.size(), 0);
      seen[dfas[r].start] = 1;
      while (!todo.empty() && !n[r]) {
        const uint32_t s = todo.back();
        todo.pop_back();
        if (dfas[r].states[s].final) n[r] = changed = true;
        for (const auto& [rule, t] : dfas[r].states[s].refs)
          if (n[rule] && !seen[t]) seen[t] = 1, todo.push_back(t);
      }
    }
  }
  return n;
}

// A rule that can reach a reference to itself without consuming a byte would make the stack grow
// forever: refused, as llama.cpp does.
void check_left_recursion(const Grammar& g, const std::vector<Dfa>& dfas, const std::vector<bool>& live,
                          const std::vector<bool>& nullable) {
  const size_t n = dfas.size();
  std::vector<std::vector<uint32_t>> left(n);
  for (size_t r = 0; r < n; ++r) {
    if (!live[r]) continue;
    std::vector<uint32_t> todo{dfas[r].start};
    std::vector<char> seen(dfas[r].states.size(), 0);
    seen[dfas[r].start] = 1;
    while (!todo.empty()) {
      const uint32_t s = todo.back();
      todo.pop_back();
      for (const auto& [rule, t] : dfas[r].states[s].refs) {
        left[r].push_back(rule);
        if (nullable[rule] && !seen[t]) seen[t] = 1, todo.push_back(t);
      }
    }
  }
  std::vector<int> mark(n, 0);  // 0 new, 1 on the path, 2 done
  std::vector<std::pair<uint32_t, size_t>> path;
  for (uint32_t r0 = 0; r0 < n; ++r0) {
    if (mark[r0]) continue;
    path.push_back({r0, 0});
    mark[r0] = 1;
    while (!path.empty()) {
      auto& [r, i] = path.back();
      if (i == left[r].size()) {
        mark[r] = 2;
        path.pop_back();
        continue;
      }
      const uint32_t c = left[r][i++];
      if (mark[c] == 1)
        throw GrammarError("left recursion", "rule " + g.rules[c].name,
                           "rule '" + g.rules[c].name + "' is left-recursive (it can reach itself without consuming input)");
      if (mark[c] == 0) mark[c] = 1, path.push_back({c, 0});
    }
  }
}

void add_rule(Automaton& a, const Dfa& d, uint32_t rule) {
  const auto base = static_cast<uint32_t>(a.nodes.size());
  a.rules[rule].start = base + d.start;
  a.rules[rule].first_node = base;
  a.rules[rule].num_nodes = static_cast<uint32_t>(d.states.size());
  a.class_maps.push_back(d.class_of);
  const auto cmap = static_cast<uint16_t>(a.class_maps.size() - 1);
  for (const Dfa::State& s : d.states) {
    Automaton::Node n;
    n.rule = rule;
    n.class_map = cmap;
    n.trans = static_cast<uint32_t>(a.trans.size());
    bool bytes = false;
    for (uint32_t t : s.next) {
      a.trans.push_back(t == kDead ? kDead : base + t);
      bytes |= t != kDead;
    }
    n.refs_begin = static_cast<uint32_t>(a.refs.size());
    for (const auto& [r, t] : s.refs) a.refs.push_back({r, base + t});
    n.refs_end = static_cast<uint32_t>(a.refs.size());
    const bool refs = n.refs_end > n.refs_begin;
    n.flags = static_cast<uint8_t>((s.final ? Automaton::kFinal : 0) | (bytes ? Automaton::kBytes : 0) |
                                   (refs ? Automaton::kRefs : 0) |
                                   (s.final && !bytes && !refs ? Automaton::kExit : 0) |
                                   (bytes && !s.final && !refs ? Automaton::kSimple : 0));
    a.nodes.push_back(n);
  }
}

}  // namespace

size_t Automaton::memory_bytes() const {
  return nodes.size() * sizeof(Node) + trans.size() * sizeof(uint32_t) + class_maps.size() * 256 +
         refs.size() * sizeof(RefEdge) + rules.size() * sizeof(RuleInfo);
}

Automaton build_automaton(const Grammar& g, const AutomatonLimits& lim) {
  if (g.root < 0 || static_cast<size_t>(g.root) >= g.rules.size()) throw GrammarError("root", "", "the grammar has no root rule");
  std::vector<Dfa> dfas = rule_dfas(g, lim);
  const std::vector<bool> live = productive_rules(dfas);
  if (!live[static_cast<size_t>(g.root)])
    throw GrammarError("empty", "", "the grammar matches no string at all (e.g. a schema no value satisfies)");
  for (size_t r = 0; r < dfas.size(); ++r)
    if (live[r]) trim(dfas[r], live);
  check_left_recursion(g, dfas, live, nullable_rules(dfas, live));
  Automaton a;
  a.rules.resize(g.rules.size());
  a.root = static_cast<uint32_t>(g.root);
  for (size_t r = 0; r < g.rules.size(); ++r) {
    a.rules[r].name = g.rules[r].name;
    if (!live[r]) continue;
    add_rule(a, dfas[r], static_cast<uint32_t>(r));
    if (a.nodes.size() > lim.max_nodes)
      throw GrammarError("size", "", "the grammar is too large (more than " + std::to_string(lim.max_nodes) + " automaton nodes)");
  }
  return a;
}

}  // namespace exspec::grammar
