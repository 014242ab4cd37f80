// The grammar's Vocabulary from exspec's Tokenizer (model/tokenizer/tokenizer.h): each token's
// bytes as its decoder writes them (byte-level BPE: the GPT-2 byte alphabet undone; SentencePiece:
// "▁" as a space and <0xNN> byte-fallback tokens as their byte), special tokens never allowed,
// the end tokens (tokenizer_config's and generation_config's EOS) allowed where the grammar may
// end, whether the decoder drops the first leading space, and the tokenizer's encode for forced
// text. The only file of grammar/ that knows the Tokenizer (library exspec_grammar_tokenizer).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grammar/vocabulary.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec::grammar {

// extra_end_ids: more ids that end a sequence (a request's stop tokens).
std::shared_ptr<const Vocabulary> tokenizer_vocabulary(const Tokenizer& t, const std::vector<int64_t>& extra_end_ids = {});

// Checks every text token against the tokenizer's own decode (after a fixed first token, so that
// no leading-space rule applies): returns the ids whose bytes differ (tests; costs a decode per token).
std::vector<int64_t> vocabulary_mismatches(const Tokenizer& t, const Vocabulary& v);

}  // namespace exspec::grammar
