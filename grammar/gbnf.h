// GBNF, llama.cpp's grammar format (grammars/README.md there; xgrammar's EBNF is close to it):
//   name ::= alternatives        one rule per definition; `root` is where the text starts
//   "literal"  [a-z0-9_]  [^"\\]  .          terminals over Unicode code points
//   ( ... )  a | b  x*  x+  x?  x{m}  x{m,}  x{m,n}
//   # comment to the end of the line
// Escapes in literals and classes: \n \r \t \\ \" \' \[ \] \- \^ \xHH \uHHHH \UHHHHHHHH.
// A rule ends at the end of its line unless inside parentheses, after a trailing `|`, or when the
// next line starts with `|`. Rule names: letters, digits, '-' and '_'. Refused with GrammarError
// (line and column): token references <...>, lookahead (= ...), left recursion.
#pragma once
#include <string_view>

#include "grammar/expr.h"

namespace exspec::grammar {

Grammar parse_gbnf(std::string_view text);

// Replaces references to rules that are not recursive by their bodies (as long as the result
// stays small), so that the matcher has fewer rules to enter and leave; keeps rules marked shared
// and drops rules the root no longer reaches.
Grammar inline_rules(const Grammar& g, size_t max_inlined_size = 4000);

}  // namespace exspec::grammar
