// Thompson construction: an expression becomes a nondeterministic automaton over bytes, with
// reference edges (a rule's language in one move) and empty moves. dfa.h makes it deterministic.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "grammar/expr.h"

namespace exspec::grammar {

struct Nfa {
  struct ByteEdge {
    uint32_t to;
    uint8_t lo, hi;  // inclusive
  };
  struct RefEdge {
    uint32_t to;
    uint32_t rule;
  };
  struct State {
    std::vector<ByteEdge> bytes;
    std::vector<RefEdge> refs;
    std::vector<uint32_t> eps;
  };
  std::vector<State> states;
  uint32_t start = 0, final = 0;
};

// Throws GrammarError("size", ...) when the automaton would exceed max_states (a repetition
// count too large, a huge character class product).
Nfa build_nfa(const Expr& e, size_t max_states);

// A lower bound of the states build_nfa makes for e, computed from the counts alone (nothing is
// expanded), saturating at `cap`: the check before the work, so that a count or a product of
// nested counts too large is refused by name before anything is built.
size_t nfa_states_at_least(const Expr& e, size_t cap);

}  // namespace exspec::grammar
