// Helpers of the grammar tests: small vocabularies, compiling each kind of input, walking texts.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
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

}  // namespace exspec::grammar::test
