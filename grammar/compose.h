// Grammars made of grammars: what a tool call is (the family's markers and literal text around
// the arguments' JSON schema, one of several functions, one or more calls). Each part keeps its
// own rules (renumbered); the result's root is the composition, then small rules are inlined.
// The only place a grammar may write a special token (special_token: Mistral's [TOOL_CALLS]);
// an end token cannot be written (it is allowed where the grammar ends).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/expr.h"

namespace exspec::grammar {

// Exactly `bytes` (UTF-8 text).
Grammar literal_grammar(std::string bytes);
// The special token `id` (a Special token of the vocabulary the grammar is compiled for).
Grammar special_token_grammar(int32_t id);
// The parts' texts one after the other.
Grammar concat(const std::vector<Grammar>& parts);
// The text of any one part.
Grammar one_of(const std::vector<Grammar>& parts);
// item (separator item)*: between min and max items (max < 0: unbounded; min >= 1).
Grammar repeated(const Grammar& item, const Grammar& separator, int min, int max);

}  // namespace exspec::grammar
