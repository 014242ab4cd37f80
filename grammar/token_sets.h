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
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "grammar/automaton.h"
#include "grammar/bitset.h"
#include "grammar/stack.h"
#include "grammar/trie.h"
#include "grammar/vocabulary.h"

namespace exspec::grammar {

// A set of token ids: a bitset when dense, sorted ids when sparse.
class TokenList {
 public:
  TokenList() = default;
  // ids: distinct token ids, any order.
  TokenList(std::vector<uint32_t> ids, size_t vocab_size);
  bool contains(uint32_t id) const;
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
  // A node that shares its class's sets for the short tokens: those (accepted, continuing), while
  // the fields above hold only its long tokens'.
  const NodeTokens* shared = nullptr;
  size_t memory_bytes() const { return accepted.memory_bytes() + continuing.memory_bytes() + sizeof(*this); }
};

// Every node's sets. Nodes of one rule that no string of up to Vocabulary::kShortBytes bytes tells
// apart (the middle of a long counted repetition) share one walk of the whole vocabulary for their
// short tokens; each then walks only the long tokens' trie.
// Entries are computed when the grammar is compiled, smallest rules first, for up to
// eager_seconds; the rest (the entries of a long counted repetition) the first time a mask needs
// them, then kept.
// Thread-safe: masks of many matchers may ask at once.
class TokenSets {
 public:
  TokenSets() = default;
  TokenSets(const TokenSets&) = delete;
  TokenSets& operator=(const TokenSets&) = delete;
  // a and v must outlive this object (the CompiledGrammar owns all three).
  void build(const Automaton& a, const Vocabulary& v, double eager_seconds = 0.1);

  const NodeTokens& at(uint32_t node) const {
    const NodeTokens* p = sets_[node].load(std::memory_order_acquire);
    return p ? *p : compute(node);
  }
  size_t entries() const { return of_node_.size(); }
  size_t walks() const { return walks_; }  // whole-vocabulary walks so far
  size_t computed() const;
  size_t memory_bytes() const;

 private:
  const NodeTokens& compute(uint32_t node) const;
  const NodeTokens& shared(uint32_t cls) const;  // under mu_

  const Automaton* a_ = nullptr;
  const Vocabulary* v_ = nullptr;
  std::vector<uint32_t> of_node_;  // per node: its class (kDead: a class of one, walked whole)
  std::vector<uint32_t> rep_;      // per class: the node its short tokens' sets come from
  std::unique_ptr<std::atomic<const NodeTokens*>[]> sets_;  // per node
  mutable std::vector<const NodeTokens*> shared_;          // per class
  mutable size_t walks_ = 0;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<NodeTokens>> owned_;
  mutable Frames frames_;
};

}  // namespace exspec::grammar
