#include "grammar/thompson.h"

#include <algorithm>
#include <string>

#include "grammar/budget.h"
#include "grammar/dfa.h"
#include "grammar/error.h"

namespace exspec::grammar {
namespace {

struct Frag {
  uint32_t in, out;
};

class Builder {
 public:
  Builder(Nfa& nfa, size_t max_states) : nfa_(nfa), max_(max_states) {}

  uint32_t state() {
    check_budget();
    if (nfa_.states.size() >= max_)
      throw GrammarError("size", "", "the grammar is too large (more than " + std::to_string(max_) +
                                         " automaton states; a repetition count or a character class product too big)");
    nfa_.states.emplace_back();
    return static_cast<uint32_t>(nfa_.states.size() - 1);
  }
  void eps(uint32_t a, uint32_t b) { nfa_.states[a].eps.push_back(b); }

  Frag build(const Expr& e) {
    const uint32_t in = state(), out = state();
    into(e, in, out);
    return {in, out};
  }

  // Adds e's strings as paths from `in` to `out`.
  void into(const Expr& e, uint32_t in, uint32_t out) {
    switch (e.kind) {
      case Expr::Kind::Empty: eps(in, out); return;
      case Expr::Kind::Nothing: return;
      case Expr::Kind::Literal: {
        uint32_t at = in;
        for (size_t i = 0; i < e.bytes.size(); ++i) {
          const uint32_t to = i + 1 == e.bytes.size() ? out : state();
          const auto b = static_cast<uint8_t>(e.bytes[i]);
          nfa_.states[at].bytes.push_back({to, b, b});
          at = to;
        }
        return;
      }
      case Expr::Kind::Chars:
        for (const Utf8Sequence& s : utf8_sequences(e.chars)) {
          uint32_t at = in;
          for (int k = 0; k < s.length; ++k) {
            const uint32_t to = k + 1 == s.length ? out : state();
            nfa_.states[at].bytes.push_back({to, s.lo[k], s.hi[k]});
            at = to;
          }
        }
        return;
      case Expr::Kind::Seq: {
        uint32_t at = in;
        for (size_t i = 0; i < e.items.size(); ++i) {
          const uint32_t to = i + 1 == e.items.size() ? out : state();
          into(*e.items[i], at, to);
          at = to;
        }
        return;
      }
      case Expr::Kind::Alt:
        for (const ExprPtr& i : e.items) {
          const Frag f = build(*i);  // own states: alternatives must not share loops
          eps(in, f.in);
          eps(f.out, out);
        }
        return;
      case Expr::Kind::Repeat: repeat(e, in, out); return;
      case Expr::Kind::Ref: nfa_.states[in].refs.push_back({out, static_cast<uint32_t>(e.rule)}); return;
      case Expr::Kind::And:
      case Expr::Kind::Diff: {
        const Dfa a = sub_dfa(*e.items[0]), b = sub_dfa(*e.items[1]);
        append_dfa(minimize(product(a, b, e.kind == Expr::Kind::Diff, max_)), nfa_, in, out);
        return;
      }
      case Expr::Kind::Graph: {
        std::vector<uint32_t> s(static_cast<size_t>(e.graph_states));
        for (uint32_t& x : s) x = state();
        eps(in, s[static_cast<size_t>(e.graph_start)]);
        for (int f : e.graph_finals) eps(s[static_cast<size_t>(f)], out);
        for (const Expr::GraphEdge& g : e.graph_edges) {
          const uint32_t a = s[static_cast<size_t>(g.from)], b = s[static_cast<size_t>(g.to)];
          if (!g.label) {
            eps(a, b);
          } else {
            const Frag f = build(*g.label);
            eps(a, f.in);
            eps(f.out, b);
          }
        }
        return;
      }
    }
  }

 private:
  void repeat(const Expr& e, uint32_t in, uint32_t out) {
    const Expr& x = *e.items[0];
    uint32_t at = in;
    for (int i = 0; i < e.min; ++i) {
      const Frag f = build(x);
      eps(at, f.in);
      at = f.out;
    }
    if (e.max < 0) {  // a loop on its own copy
      const Frag f = build(x);
      eps(at, f.in);
      eps(f.out, f.in);
      eps(f.out, out);
      eps(at, out);
      return;
    }
    for (int i = e.min; i < e.max; ++i) {  // optional copies, each may stop
      eps(at, out);
      const Frag f = build(x);
      eps(at, f.in);
      at = f.out;
    }
    eps(at, out);
  }

  Dfa sub_dfa(const Expr& e) {
    if (has_refs(e)) throw GrammarError("intersection", "", "an intersection or difference of grammars that reference rules");
    Nfa sub;
    Builder b(sub, max_);
    const Frag f = b.build(e);
    sub.start = f.in;
    sub.final = f.out;
    return minimize(determinize(sub, max_));
  }

  Nfa& nfa_;
  size_t max_;
};

}  // namespace

namespace {

size_t sat_add(size_t a, size_t b, size_t cap) { return a >= cap || b >= cap - a ? cap : a + b; }
size_t sat_mul(size_t a, size_t n, size_t cap) { return n != 0 && a > cap / n ? cap : std::min(cap, a * n); }

// The states Builder::into adds between its two ends (build: 2 more), as counted there.
size_t inner_states(const Expr& e, size_t cap) {
  check_budget();
  switch (e.kind) {
    case Expr::Kind::Empty:
    case Expr::Kind::Nothing:
    case Expr::Kind::Ref:
    case Expr::Kind::Chars:  // at least none: its UTF-8 sequences are not enumerated here
      return 0;
    case Expr::Kind::Literal: return e.bytes.empty() ? 0 : e.bytes.size() - 1;
    case Expr::Kind::Seq: {
      size_t n = e.items.empty() ? 0 : e.items.size() - 1;
      for (size_t i = 0; i < e.items.size() && n < cap; ++i) n = sat_add(n, inner_states(*e.items[i], cap), cap);
      return n;
    }
    case Expr::Kind::Alt: {
      size_t n = 0;
      for (size_t i = 0; i < e.items.size() && n < cap; ++i) n = sat_add(n, sat_add(2, inner_states(*e.items[i], cap), cap), cap);
      return n;
    }
    case Expr::Kind::Repeat: {
      const size_t copies = static_cast<size_t>(e.min) + (e.max < 0 ? 1 : static_cast<size_t>(e.max - e.min));
      return copies == 0 ? 0 : sat_mul(sat_add(2, inner_states(*e.items[0], cap), cap), copies, cap);
    }
    case Expr::Kind::And:
    case Expr::Kind::Diff: return 0;  // a product of two DFAs: bounded as it is built
    case Expr::Kind::Graph: {
      size_t n = static_cast<size_t>(e.graph_states);
      for (size_t i = 0; i < e.graph_edges.size() && n < cap; ++i)
        if (e.graph_edges[i].label) n = sat_add(n, sat_add(2, inner_states(*e.graph_edges[i].label, cap), cap), cap);
      return n;
    }
  }
  return 0;
}

}  // namespace

size_t nfa_states_at_least(const Expr& e, size_t cap) { return sat_add(2, inner_states(e, cap), cap); }

Nfa build_nfa(const Expr& e, size_t max_states) {
  Nfa nfa;
  Builder b(nfa, max_states);
  const Frag f = b.build(e);
  nfa.start = f.in;
  nfa.final = f.out;
  return nfa;
}

}  // namespace exspec::grammar
