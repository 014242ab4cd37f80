// Helpers of the grammar tests: small vocabularies, compiling each kind of input, walking texts.
#pragma once
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include <nlohmann/json.hpp>

#include "grammar/matcher.h"

namespace exspec::grammar::test {

// Every single byte as a token (ids 0..255), then `extra` multi-byte tokens, then an end token.
std::shared_ptr<const Vocabulary> byte_vocab(const std::vector<std::string>& extra = {});
int32_t end_token(const Vocabulary& v);

std::shared_ptr<const CompiledGrammar> compile_gbnf(const std::string& text, std::shared_ptr<const Vocabulary> v = nullptr);
std::shared_ptr<const CompiledGrammar> compile_regex(const std::string& pattern, std::shared_ptr<const Vocabulary> v = nullptr);
std::shared_ptr<const CompiledGrammar> compile_schema(const std::string& schema_json,
                                                      std::shared_ptr<const Vocabulary> v = nullptr);

// The matcher accepts the whole text (byte by byte) and may end after it.
bool full_match(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text);

// The mask by brute force: token t is allowed iff a fork of the matcher accepts it.
TokenBitset brute_force_mask(const Matcher& m);

// The token ids a mask holds.
std::vector<int32_t> allowed(const TokenBitset& mask);

// A random walk through the grammar: random allowed tokens from the mask, an end token where
// allowed (mostly), half the other picks preferring tokens with a closing byte (`"]},`) so that
// strings and arrays end. The tokens before the end token, or none when `budget` steps ran out.
std::optional<std::vector<int32_t>> random_walk(const std::shared_ptr<const CompiledGrammar>& g, std::mt19937_64& rng,
                                                int budget);

// Debian's python3-jsonschema (tests/grammar/validate.py) over {"name", "schema", "text"} cases.
struct Verdict {
  size_t checked = 0, invalid = 0;
  std::string report;  // the first failures
};
Verdict validate_with_python(const std::vector<nlohmann::ordered_json>& cases);

}  // namespace exspec::grammar::test
