// Deterministic automata over bytes and rule references: one rule's body after subset
// construction. Bytes are grouped into classes that every state treats alike; a state moves on a
// class to at most one state and on a rule reference to at most one state.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "grammar/nfa.h"

namespace exspec::grammar {

constexpr uint32_t kDead = UINT32_MAX;

struct Dfa {
  struct State {
    bool final = false;
    std::vector<uint32_t> next;                        // per byte class; kDead when none
    std::vector<std::pair<uint32_t, uint32_t>> refs;   // (rule, state), sorted by rule
  };
  std::array<uint8_t, 256> class_of{};
  uint32_t num_classes = 1;
  std::vector<State> states;
  uint32_t start = 0;

  uint32_t next(uint32_t s, uint8_t byte) const { return states[s].next[class_of[byte]]; }
};

Dfa determinize(const Nfa& nfa, size_t max_states);
// Merges equivalent states (Moore's refinement, O(states^2) on long chains: DFAs over max_states,
// such as long counted repetitions, are left as subset construction made them).
Dfa minimize(const Dfa& d, size_t max_states = 1500);
// Strings of both (diff = false) or of a and not of b (diff = true). Neither may have references.
Dfa product(const Dfa& a, const Dfa& b, bool diff, size_t max_states);
// Drops references to rules not in `productive` (indexed by rule), then states that are not
// reachable or cannot reach a final state. False when nothing is left (an empty language).
bool trim(Dfa& d, const std::vector<bool>& productive);
// Whether a final state is reachable through bytes and references to productive rules.
bool accepts_something(const Dfa& d, const std::vector<bool>& productive);

// The automaton as an NFA (to embed a product inside a larger expression).
void append_dfa(const Dfa& d, Nfa& into, uint32_t entry, uint32_t exit);

}  // namespace exspec::grammar
