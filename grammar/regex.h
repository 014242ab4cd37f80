// Regular expressions, the ECMA-262 subset that JSON Schema's `pattern` and vLLM's guided_regex
// use in practice, over Unicode code points (README.md lists it): literals, `.`, classes with
// ranges and negation, \d \w \s (ASCII, as in ECMA-262) and their negations, escapes (\t \n \r
// \f \v \0 \xHH \uHHHH \u{H..}), groups (capturing, (?:), named), alternation, quantifiers
// * + ? {n} {n,} {n,m} (lazy forms accepted: same language), and ^ / $ at the ends of top-level
// alternatives. Refused with GrammarError naming the construct and its offset: lookaround,
// backreferences, \b \B, \p{..}, inline flags, possessive quantifiers, anchors elsewhere.
#pragma once
#include <string_view>

#include "grammar/expr.h"

namespace exspec::grammar {

enum class RegexMode {
  FullMatch,  // the whole text matches (guided_regex)
  Search,     // some part of the text matches, unless anchored (JSON Schema's `pattern`)
};

// The strings the pattern accepts under `mode`, as UTF-8 bytes. `where` prefixes positions in
// errors (e.g. "#/properties/a/pattern").
ExprPtr parse_regex(std::string_view pattern, RegexMode mode, const std::string& where = "");

// Rewrites an expression over characters into the text of a JSON string's content: characters
// JSON must escape (", \, U+0000..U+001F) become their escape (\" \\ \b \f \n \r \t, else
// \u00XX), all others stay as they are. The form Python's json.dumps(ensure_ascii=False) writes.
ExprPtr json_string_content(const ExprPtr& e);
// One character as it appears inside a JSON string (the same rule).
std::string json_escape_char(uint32_t c);

}  // namespace exspec::grammar
