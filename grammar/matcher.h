// One sequence's position in a compiled grammar. The step keeps one Matcher per constrained
// sequence: it asks for the mask of allowed tokens, accepts the committed tokens, rolls back
// what verification rejected, and proposes the forced continuation as free drafts (README.md).
// Not thread-safe: one thread at a time per Matcher (its scratch buffers are reused).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/bitset.h"
#include "grammar/compiled_grammar.h"
#include "grammar/stack.h"

namespace exspec::grammar {

class TrieWalk;

// The text the grammar allows next when it allows exactly one (keys of a strict schema, ": ",
// closing brackets), and tokens that write a prefix of it, each allowed in turn.
struct Forced {
  std::string bytes;
  std::vector<int32_t> tokens;
};

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);
  ~Matcher();
  Matcher(Matcher&&) noexcept;
  Matcher& operator=(Matcher&&) noexcept;
  Matcher fork() const;  // an independent copy at the same position

  // Takes the token if the grammar allows it here (true); otherwise changes nothing (false).
  bool accept(int32_t token);
  // Accepts tokens[0..n) in order up to the first one the grammar refuses; returns how many it
  // took. The verifier advances over a step's drafts with it (the masks of columns 1..v), then
  // rolls back what verification rejected.
  size_t accept_prefix(const int32_t* tokens, size_t n);
  // Undoes the last n accepted tokens (n <= accepted()).
  void rollback(size_t n);
  size_t accepted() const { return history_.size() - 1; }
  // The grammar may end here: the end tokens are allowed.
  bool can_end();
  // An end token was accepted: nothing more is allowed.
  bool ended() const { return history_.back().ended; }
  // mask := the tokens allowed now (mask.size() == the vocabulary's size).
  void fill_mask(TokenBitset& mask);
  // The forced continuation, up to max_bytes (empty when the next byte is a choice or the text
  // may end here).
  Forced forced(size_t max_bytes = 256);
  // Takes raw text (tests, and what a tokenizer-free caller checks); same rule as accept().
  bool accept_bytes(std::string_view bytes);

  const CompiledGrammar& grammar() const { return *grammar_; }

 private:
  struct Entry {
    State stacks;
    bool strip_pending = false;  // the leading space of the first text is not written
    bool ended = false;
  };
  bool advance(Entry& e, std::string_view bytes);
  void add_stack(const Stack& s, TokenBitset& mask);
  void add_sets(const NodeTokens& nt, const Stack& s, TokenBitset& mask);
  void add_stripped(const State& state, TokenBitset& mask);
  std::vector<int32_t> tokenize_forced(const State& from, const std::string& bytes);
  size_t text_tokens(std::string_view text, std::vector<int32_t>& out) const;

  std::shared_ptr<const CompiledGrammar> grammar_;
  std::unique_ptr<Frames> frames_;
  std::unique_ptr<TrieWalk> walk_;
  std::vector<Entry> history_;  // history_[0]: the start; back(): now
  Expanded expanded_;
};

// Whether the grammar matches the whole text (no tokens involved).
bool matches(const CompiledGrammar& g, std::string_view text);

}  // namespace exspec::grammar
