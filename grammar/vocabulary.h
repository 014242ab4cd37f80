// The vocabulary as the grammar engine sees it: each token id's bytes (what it adds to the
// output text) and its kind. Text tokens are matched byte by byte (a byte-level BPE token may end
// in the middle of a UTF-8 character; the next token finishes it); the end tokens (EOS,
// <|eot_id|>, ...) are allowed exactly where the grammar may end; other special tokens only where
// a grammar writes their marker (special_token_bytes), which only the composition API writes
// (compose.h: a tool-call syntax's [TOOL_CALLS]), never a schema, regex or GBNF grammar.
// Built from exspec's Tokenizer by tokenizer_vocabulary() (model/tokenizer/grammar_vocab.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/trie.h"

namespace exspec::grammar {

enum class TokenKind : uint8_t { Text, Special, End };

// The bytes a special token (kind Special) stands for in a grammar: 0xFF, never part of UTF-8
// text, then the id (4 bytes, big-endian). Text tokens holding a 0xFF byte are never allowed (no
// UTF-8 text has one), so that no text can spell a marker.
std::string special_token_bytes(int32_t id);
inline constexpr unsigned char kSpecialMarker = 0xFF;
inline constexpr size_t kSpecialBytes = 5;

struct VocabularyOptions {
  // SentencePiece decoders (Llama 2, Mistral) drop the first character of the decoded text when
  // it is a space (a Strip decoder, or Metaspace's prepend scheme): the first token "▁{" writes
  // "{". The matcher then reads one leading space of the first text as not written.
  bool strip_first_space = false;
  // The tokenizer's encoding of a text (no special tokens): forced continuations are tokenized
  // with it, so that forced drafts are the tokens the model itself would write. Optional: without
  // it, forced text is cut into tokens by longest match.
  std::function<std::vector<int32_t>(std::string_view)> encode;
};

class Vocabulary {
 public:
  // bytes[i], kinds[i]: token i. A Text token with no bytes is never allowed. A Special token's
  // bytes become its marker (special_token_bytes); a Text token's bytes holding 0xFF are dropped.
  Vocabulary(std::vector<std::string> bytes, std::vector<TokenKind> kinds, VocabularyOptions options = {});

  size_t size() const { return bytes_.size(); }
  const std::string& bytes(int32_t id) const { return bytes_[static_cast<size_t>(id)]; }
  TokenKind kind(int32_t id) const { return kinds_[static_cast<size_t>(id)]; }
  const std::vector<int32_t>& end_tokens() const { return ends_; }
  const Trie& trie() const { return trie_; }  // every text token with bytes, and the special tokens' markers
  // Tokens longer than kShortBytes (about 1% of a 128k vocabulary): nodes that no shorter string
  // tells apart share their sets for the short tokens and walk only these (token_sets.h).
  static constexpr size_t kShortBytes = 16;
  const Trie& long_trie() const { return long_trie_; }
  bool is_long(int32_t id) const { return kinds_[static_cast<size_t>(id)] == TokenKind::Text && bytes(id).size() > kShortBytes; }
  const VocabularyOptions& options() const { return options_; }
  // Identifies the vocabulary's content (cache keys): equal vocabularies give equal values.
  uint64_t fingerprint() const { return fingerprint_; }
  size_t memory_bytes() const;

 private:
  std::vector<std::string> bytes_;
  std::vector<TokenKind> kinds_;
  std::vector<int32_t> ends_;
  VocabularyOptions options_;
  Trie trie_, long_trie_;
  uint64_t fingerprint_ = 0;
};

}  // namespace exspec::grammar
