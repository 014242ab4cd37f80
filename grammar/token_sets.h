// What each automaton node allows, computed once per grammar (xgrammar's "adaptive token mask
// cache", over a stack of rule DFAs): walking the vocabulary trie from a stack that holds only
// the node, every token either
//   - stays inside the node's rule (entering other rules on the way is fine): allowed wherever
//     the node is on top, whatever lies below: `accepted`;
//   - or needs the rule to end after its first d bytes: its other bytes must be allowed by
//     whatever lies below the node at mask time: `continuing` holds those tails (a trie over the
//     tails, each leaf naming its tokens), `from_start` says every token may (d = 0);
//   - or neither: never allowed there.
// A token that ends exactly where the rule ends is in `accepted`: a rule below always goes on.
#pragma once
#include <cstdint>
#include <vector>

#include "grammar/automaton.h"
#include "grammar/bitset.h"
#include "grammar/trie.h"
#include "grammar/vocabulary.h"

namespace exspec::grammar {

// A set of token ids: a bitset when dense, sorted ids when sparse.
class TokenList {
 public:
  TokenList() = default;
  TokenList(std::vector<uint32_t> sorted_ids, size_t vocab_size);
  void or_into(TokenBitset& mask) const;
  size_t count() const { return count_; }
  size_t memory_bytes() const { return bits_.size() * 8 + ids_.size() * 4; }
  bool operator==(const TokenList& o) const { return bits_ == o.bits_ && ids_ == o.ids_; }

 private:
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> ids_;
  size_t count_ = 0;
};

struct NodeTokens {
  TokenList accepted;
  bool from_start = false;
  Trie continuing;  // empty (size() <= 1) when no token continues below after some bytes
  size_t memory_bytes() const { return accepted.memory_bytes() + continuing.memory_bytes() + sizeof(*this); }
};

// Nodes of one rule that no token can tell apart (the same moves for every byte string as long as
// the longest token: a long counted repetition) share one entry.
struct TokenSets {
  std::vector<uint32_t> of_node;  // per automaton node: its entry in `sets`
  std::vector<NodeTokens> sets;
  const NodeTokens& at(uint32_t node) const { return sets[of_node[node]]; }
  size_t memory_bytes() const;
};

TokenSets compute_token_sets(const Automaton& a, const Vocabulary& v);

}  // namespace exspec::grammar
