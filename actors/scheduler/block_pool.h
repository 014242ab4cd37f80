// Which blocks of a paged KV store (model/kv_store.h) hold what: a scheduling fact, kept apart
// from the tensors. Plain C++, no torch: the Scheduler owns one per store (target, draft).
//
// A store is `slots` rows of `blocks_per_slot` blocks of `block_size` token positions. A
// sequence holds a block table (its i-th block holds its positions [i bs, (i + 1) bs)); blocks
// are taken as it grows and given back when it ends. Each slot's own row is its home: a
// sequence in slot s takes home(s, i) as its i-th block while that block is not held, so the
// live sequences of consecutive slots read their keys as one view, as the contiguous slots did.
// Beyond its row, or when a home block is held by another sequence, it borrows any block that
// is not held: an uncached one first, else the least recently used cached one. Attention then
// gathers that row's positions (model/kv_store.h says what each costs).
//
// Exact prefix caching: a full block a sequence has stored (published after each of its jobs,
// and when it ends) is keyed by its tokens and the key of the block before it (a chain that
// starts at the prompt's first token: equal keys, equal prefixes; keys are compared whole, never
// by a hash alone). A later sequence whose tokens
// start with a chain of cached blocks takes them into its table (shared, read-only: a sequence
// only writes positions after the ones it took) and stores only the rest. A position's keys and
// values depend only on the tokens up to it, so this is exact. A cached block stays until a
// sequence takes it for new content (least recently used first, or as the home block of the
// slot it belongs to).
#pragma once
#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace exspec {

using BlockTable = std::vector<int64_t>;  // block ids, in position order

class BlockPool {
 public:
  BlockPool() = default;
  BlockPool(int64_t slots, int64_t blocks_per_slot, int64_t block_size, bool cache = true);

  int64_t block_size() const { return block_size_; }
  int64_t blocks() const { return static_cast<int64_t>(blocks_.size()); }
  int64_t blocks_per_slot() const { return per_slot_; }
  int64_t held() const { return held_; }              // in some sequence's table
  int64_t available() const { return blocks() - held_; }  // free or cached, not held
  int64_t cached() const { return static_cast<int64_t>(keys_.size()); }
  int64_t home(int64_t slot, int64_t i) const { return slot * per_slot_ + i; }
  // Blocks needed to hold n positions.
  int64_t blocks_for(int64_t positions) const { return (positions + block_size_ - 1) / block_size_; }

  // The cached blocks that hold the longest prefix of `tokens` in whole blocks, at most
  // max_positions positions of it (a sequence computes at least its pending token itself).
  BlockTable match(const std::vector<int64_t>& tokens, int64_t max_positions) const;
  // Of a match, the blocks no sequence holds now (taking them lowers available()).
  int64_t unheld(const BlockTable& blocks) const;
  // Puts blocks of a match into a table (empty), shared.
  void take(BlockTable& table, const BlockTable& blocks);
  // Grows the table of the sequence in `slot` to hold `positions` positions; all or nothing
  // (false: not enough blocks that no sequence holds).
  bool grow(BlockTable& table, int64_t slot, int64_t positions);
  // Whether every home block of `slot` up to n blocks is free of holders (a slot move's target).
  bool home_free(int64_t slot, int64_t n) const;
  // Whether they are also free of cached content (taking them forgets nothing).
  bool home_clean(int64_t slot, int64_t n) const;
  // The first n home blocks of `slot`, now held (home_free(slot, n) must hold).
  BlockTable take_home(int64_t slot, int64_t n);
  // Whether the table is the slot's own blocks, in order (attention reads it as a view).
  bool at_home(const BlockTable& table, int64_t slot) const;
  // Caches the table's full blocks among the first `valid` positions, which hold the keys and
  // values of `tokens` (unless the pool does not cache): a later sequence may take them while
  // this one still holds them, as it never writes them again. Idempotent.
  void publish(const BlockTable& table, const std::vector<int64_t>& tokens, int64_t valid);
  // Gives a table's blocks back (the table is emptied). What they cache stays cached; nothing is
  // cached here: publish first what the table's sequence stored.
  void release(BlockTable& table);

 private:
  struct Key {
    uint64_t parent = 0;  // the entry of the block before (0: the first block)
    std::vector<int64_t> tokens;
    bool operator==(const Key& o) const { return parent == o.parent && tokens == o.tokens; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Block {
    int32_t holders = 0;
    uint64_t entry = 0;  // its cache entry (0: not cached)
    uint64_t last_use = 0;
  };
  // A block no sequence holds, now held (what it cached is forgotten).
  void claim(int64_t id);
  void hold(int64_t id);
  void unhold(int64_t id);
  void forget(int64_t id);  // drops its cache entry
  // The next block to borrow: an uncached free one, else the least recently used cached one.
  int64_t borrowable() const;

  int64_t per_slot_ = 0, block_size_ = 1, held_ = 0;
  bool cache_ = true;
  std::vector<Block> blocks_;
  std::unordered_map<Key, int64_t, KeyHash> keys_;  // cached blocks by key
  std::unordered_map<uint64_t, Key> entries_;       // and their keys by entry
  std::set<int64_t> free_;                          // not held, not cached
  std::set<std::pair<uint64_t, int64_t>> idle_;     // cached, not held: (last use, id)
  uint64_t clock_ = 0, next_entry_ = 1;
};

}  // namespace exspec
