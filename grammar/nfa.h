// An expression's nondeterministic automaton over bytes, with reference edges (a rule's language
// in one move) and empty moves. thompson.h builds it from an expression; dfa.h makes it
// deterministic.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

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

}  // namespace exspec::grammar
