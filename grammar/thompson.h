// Thompson construction (grammar/nfa.h): an expression's automaton. An intersection or difference
// inside it is built through deterministic automata (grammar/dfa.h), which is why this is apart
// from the automaton's type.
#pragma once
#include <cstddef>

#include "grammar/expr.h"
#include "grammar/nfa.h"

namespace exspec::grammar {

// Throws GrammarError("size", ...) when the automaton would exceed max_states (a repetition
// count too large, a huge character class product).
Nfa build_nfa(const Expr& e, size_t max_states);

// A lower bound of the states build_nfa makes for e, computed from the counts alone (nothing is
// expanded), saturating at `cap`: the check before the work, so that a count or a product of
// nested counts too large is refused by name before anything is built.
size_t nfa_states_at_least(const Expr& e, size_t cap);

}  // namespace exspec::grammar
