#include "grammar/dfa.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

#include "grammar/budget.h"
#include "grammar/error.h"
#include "grammar/refine.h"

namespace exspec::grammar {
namespace {

using StateSet = std::vector<uint32_t>;

void closure(const Nfa& nfa, StateSet& set, std::vector<char>& seen) {
  std::vector<uint32_t> todo(set.begin(), set.end());
  for (uint32_t s : set) seen[s] = 1;
  while (!todo.empty()) {
    const uint32_t s = todo.back();
    todo.pop_back();
    for (uint32_t t : nfa.states[s].eps)
      if (!seen[t]) {
        seen[t] = 1;
        set.push_back(t);
        todo.push_back(t);
      }
  }
  for (uint32_t s : set) seen[s] = 0;
  std::sort(set.begin(), set.end());
  set.erase(std::unique(set.begin(), set.end()), set.end());
}

void too_large(size_t max) {
  throw GrammarError("size", "", "the grammar is too large (more than " + std::to_string(max) + " automaton states)");
}

struct VecHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    size_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return h;
  }
};

}  // namespace

Dfa determinize(const Nfa& nfa, size_t max_states) {
  Dfa d;
  std::array<bool, 257> cut{};
  cut[0] = true;
  for (const Nfa::State& s : nfa.states)
    for (const Nfa::ByteEdge& e : s.bytes) {
      cut[e.lo] = true;
      cut[static_cast<size_t>(e.hi) + 1] = true;
    }
  int c = -1;
  for (int b = 0; b < 256; ++b) {
    if (cut[static_cast<size_t>(b)]) ++c;
    d.class_of[static_cast<size_t>(b)] = static_cast<uint8_t>(c);
  }
  d.num_classes = static_cast<uint32_t>(c + 1);

  std::vector<char> seen(nfa.states.size(), 0);
  std::unordered_map<StateSet, uint32_t, VecHash> ids;
  std::vector<StateSet> sets;
  auto intern = [&](StateSet set) {
    closure(nfa, set, seen);
    auto it = ids.find(set);
    if (it != ids.end()) return it->second;
    if (sets.size() >= max_states) too_large(max_states);
    const auto id = static_cast<uint32_t>(sets.size());
    ids.emplace(set, id);
    sets.push_back(std::move(set));
    return id;
  };
  d.start = intern({nfa.start});
  std::vector<StateSet> buckets(d.num_classes);
  for (size_t i = 0; i < sets.size(); ++i) {
    check_budget();
    Dfa::State out;
    out.next.assign(d.num_classes, kDead);
    std::map<uint32_t, StateSet> refs;
    for (StateSet& b : buckets) b.clear();
    for (uint32_t s : sets[i]) {
      if (s == nfa.final) out.final = true;
      for (const Nfa::ByteEdge& e : nfa.states[s].bytes)
        for (uint32_t k = d.class_of[e.lo]; k <= d.class_of[e.hi]; ++k) buckets[k].push_back(e.to);
      for (const Nfa::RefEdge& r : nfa.states[s].refs) refs[r.rule].push_back(r.to);
    }
    for (uint32_t k = 0; k < d.num_classes; ++k)
      if (!buckets[k].empty()) out.next[k] = intern(buckets[k]);
    for (auto& [rule, set] : refs) out.refs.emplace_back(rule, intern(set));
    d.states.push_back(std::move(out));
  }
  return d;
}

Dfa minimize(const Dfa& d, size_t max_states) {
  const size_t n = d.states.size();
  if (n > max_states || n < 2) return d;
  std::vector<uint32_t> initial(n);
  for (size_t s = 0; s < n; ++s) initial[s] = d.states[s].final ? 1 : 0;
  const std::vector<uint32_t> cls = refine_partition(std::move(initial), [&](uint32_t s, const std::vector<uint32_t>& c, std::vector<uint32_t>& key) {
    const Dfa::State& st = d.states[s];
    key.push_back(c[s]);
    for (uint32_t t : st.next) key.push_back(t == kDead ? kDead : c[t]);
    for (const auto& [rule, t] : st.refs) {
      key.push_back(rule);
      key.push_back(c[t]);
    }
  }, n + 1);
  uint32_t count = 0;
  for (uint32_t c : cls) count = std::max(count, c + 1);
  Dfa m;
  m.class_of = d.class_of;
  m.num_classes = d.num_classes;
  m.states.resize(count);
  std::vector<bool> done(count, false);
  for (size_t s = 0; s < n; ++s) {
    const uint32_t c = cls[s];
    if (done[c]) continue;
    done[c] = true;
    Dfa::State st = d.states[s];
    for (uint32_t& t : st.next)
      if (t != kDead) t = cls[t];
    for (auto& r : st.refs) r.second = cls[r.second];
    m.states[c] = std::move(st);
  }
  m.start = cls[d.start];
  return m;
}

Dfa product(const Dfa& a, const Dfa& b, bool diff, size_t max_states) {
  if (!a.states.empty() && !b.states.empty())
    for (const Dfa* x : {&a, &b})
      for (const Dfa::State& s : x->states)
        if (!s.refs.empty()) throw GrammarError("intersection", "", "an intersection of grammars that reference rules");
  Dfa p;
  std::map<std::pair<uint8_t, uint8_t>, uint8_t> pairs;
  std::vector<uint8_t> rep;
  for (int byte = 0; byte < 256; ++byte) {
    const auto key = std::make_pair(a.class_of[static_cast<size_t>(byte)], b.class_of[static_cast<size_t>(byte)]);
    auto it = pairs.find(key);
    if (it == pairs.end()) {
      it = pairs.emplace(key, static_cast<uint8_t>(rep.size())).first;
      rep.push_back(static_cast<uint8_t>(byte));
    }
    p.class_of[static_cast<size_t>(byte)] = it->second;
  }
  p.num_classes = static_cast<uint32_t>(rep.size());
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> ids;
  std::vector<std::pair<uint32_t, uint32_t>> todo;
  auto intern = [&](uint32_t x, uint32_t y) {
    auto [it, fresh] = ids.emplace(std::make_pair(x, y), static_cast<uint32_t>(todo.size()));
    if (fresh) {
      if (todo.size() >= max_states) too_large(max_states);
      todo.emplace_back(x, y);
    }
    return it->second;
  };
  p.start = intern(a.start, b.start);
  for (size_t i = 0; i < todo.size(); ++i) {
    check_budget();
    const auto [x, y] = todo[i];
    Dfa::State st;
    const bool yf = y != kDead && b.states[y].final;
    st.final = a.states[x].final && (diff ? !yf : yf);
    st.next.assign(p.num_classes, kDead);
    for (uint32_t k = 0; k < p.num_classes; ++k) {
      const uint32_t nx = a.next(x, rep[k]);
      const uint32_t ny = y == kDead ? kDead : b.next(y, rep[k]);
      if (nx == kDead || (!diff && ny == kDead)) continue;
      st.next[k] = intern(nx, ny);
    }
    p.states.push_back(std::move(st));
  }
  return p;
}

bool accepts_something(const Dfa& d, const std::vector<bool>& productive) {
  std::vector<char> seen(d.states.size(), 0);
  std::vector<uint32_t> todo{d.start};
  seen[d.start] = 1;
  while (!todo.empty()) {
    const uint32_t s = todo.back();
    todo.pop_back();
    if (d.states[s].final) return true;
    auto visit = [&](uint32_t t) {
      if (t != kDead && !seen[t]) seen[t] = 1, todo.push_back(t);
    };
    for (uint32_t t : d.states[s].next) visit(t);
    for (const auto& [rule, t] : d.states[s].refs)
      if (productive[rule]) visit(t);
  }
  return false;
}

bool trim(Dfa& d, const std::vector<bool>& productive) {
  const size_t n = d.states.size();
  for (Dfa::State& s : d.states)
    s.refs.erase(std::remove_if(s.refs.begin(), s.refs.end(), [&](const auto& r) { return !productive[r.first]; }),
                 s.refs.end());
  std::vector<std::vector<uint32_t>> back(n);
  std::vector<char> reach(n, 0), co(n, 0);
  std::vector<uint32_t> todo{d.start};
  reach[d.start] = 1;
  while (!todo.empty()) {
    const uint32_t s = todo.back();
    todo.pop_back();
    auto edge = [&](uint32_t t) {
      if (t == kDead) return;
      back[t].push_back(s);
      if (!reach[t]) reach[t] = 1, todo.push_back(t);
    };
    for (uint32_t t : d.states[s].next) edge(t);
    for (const auto& r : d.states[s].refs) edge(r.second);
  }
  for (uint32_t s = 0; s < n; ++s)
    if (reach[s] && d.states[s].final) co[s] = 1, todo.push_back(s);
  while (!todo.empty()) {
    const uint32_t s = todo.back();
    todo.pop_back();
    for (uint32_t p : back[s])
      if (!co[p]) co[p] = 1, todo.push_back(p);
  }
  if (!co[d.start]) return false;
  std::vector<uint32_t> id(n, kDead);
  uint32_t kept = 0;
  for (uint32_t s = 0; s < n; ++s)
    if (reach[s] && co[s]) id[s] = kept++;
  std::vector<Dfa::State> out(kept);
  for (uint32_t s = 0; s < n; ++s) {
    if (id[s] == kDead) continue;
    Dfa::State st = std::move(d.states[s]);
    for (uint32_t& t : st.next) t = t == kDead ? kDead : id[t];
    st.refs.erase(std::remove_if(st.refs.begin(), st.refs.end(), [&](const auto& r) { return id[r.second] == kDead; }),
                  st.refs.end());
    for (auto& r : st.refs) r.second = id[r.second];
    out[id[s]] = std::move(st);
  }
  d.states = std::move(out);
  d.start = id[d.start];
  return true;
}

void append_dfa(const Dfa& d, Nfa& into, uint32_t entry, uint32_t exit) {
  const auto base = static_cast<uint32_t>(into.states.size());
  into.states.resize(into.states.size() + d.states.size());
  into.states[entry].eps.push_back(base + d.start);
  for (size_t s = 0; s < d.states.size(); ++s) {
    Nfa::State& st = into.states[base + s];
    if (d.states[s].final) st.eps.push_back(exit);
    for (int lo = 0; lo < 256;) {  // runs of bytes in one class
      int hi = lo;
      const uint8_t k = d.class_of[static_cast<size_t>(lo)];
      while (hi + 1 < 256 && d.class_of[static_cast<size_t>(hi + 1)] == k) ++hi;
      const uint32_t t = d.states[s].next[k];
      if (t != kDead) st.bytes.push_back({base + t, static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)});
      lo = hi + 1;
    }
    for (const auto& [rule, t] : d.states[s].refs) st.refs.push_back({base + t, rule});
  }
}

}  // namespace exspec::grammar
