// The in-place stores' slots and blocks, beside the Scheduler as vLLM's KVCacheManager sits
// beside its scheduler: which slot each live sequence holds (slot_table.h), which blocks of each
// model's store hold its positions (block_pool.h, one pool a store), and the exact prefix cache.
// Plain C++: it knows slots, token lists and the counts of positions each store holds, never a
// sequence or a tensor; the Scheduler decides who is admitted, who steps and who is pre-empted.
//
//   admission  what a newcomer would take that no sequence holds now (its tokens and a first
//              step, less what its cached prefix lends)
//   allocate   a newcomer's slot, its cached prefix and blocks for the rest of its tokens
//   reserve    blocks for what a step may write
//   publish    a sequence's full stored blocks into the prefix cache (others may share them)
//   free       a leaving sequence's blocks back, cached or not, its slot free
//   plan moves a step's scattered rows into consecutive slots (slot_moves.h)
// and, for the job that runs next over a slot, the copies of cached prefixes into its own blocks.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "actors/scheduler/block_pool.h"
#include "actors/scheduler/engine_config.h"
#include "actors/scheduler/plan.h"
#include "actors/scheduler/run_stats.h"
#include "actors/scheduler/slot_table.h"
#include "model/slot_row.h"

namespace exspec {

// Blocks, per store.
struct StoreBlocks {
  int64_t target = 0, draft = 0;
};

class BlockManager {
 public:
  // The geometry of config.slots rows (config.slot_positions, else a whole context, in blocks of
  // config.block_size), a draft store when config.draft, the cache when config.prefix_cache.
  explicit BlockManager(const EngineConfig& config);

  int64_t slots() const { return slots_.slots(); }
  int64_t used() const { return slots_.used(); }
  BlockCounts counts() const;  // the target's store
  // Blocks no sequence holds, in each store (the draft's 0 without a draft).
  StoreBlocks available() const;

  // The blocks a sequence with these tokens would take now that no sequence holds: its tokens
  // and `step` more positions, less its cached prefix's blocks that are held already.
  StoreBlocks admission(const std::vector<int64_t>& tokens, int64_t step) const;

  // A newcomer: a free slot (the one whose own row holds the first block of its cached prefix,
  // so that its keys are read as a view; else the coldest), the cached blocks of the longest
  // prefix of its tokens before the pending one (none when use_cache is false; the draft's at
  // most the target's), and blocks for the rest of them. nullopt when the stores ran out after
  // all (a newcomer admitted beside it took blocks it had counted on): then nothing is taken.
  struct Allocation {
    int64_t slot = -1;
    Stored cached;       // positions the cached prefix gives each store
    int64_t copied = 0;  // cached blocks to copy into the slot's own blocks first (take_copies)
  };
  std::optional<Allocation> allocate(const std::vector<int64_t>& tokens, bool use_cache);

  // Whether the slot's tables can grow to `positions` in both stores (a step's K + 1 past its tokens).
  bool can_reserve(int64_t slot, int64_t positions) const;
  // Grows them (can_reserve must hold).
  void reserve(int64_t slot, int64_t positions);

  // Caches the slot's full blocks among the positions each store holds of `tokens`.
  void publish(int64_t slot, const std::vector<int64_t>& tokens, Stored stored);
  // The slot's sequence left: its blocks back, its slot free. Nothing is cached here: publish
  // first what it stored (a failed sequence publishes nothing).
  void free(int64_t slot);

  // The copies of cached prefixes into the slot's own blocks, for the next job over it (handed
  // out once), and when that job returned: the cached blocks they read are let go.
  BlockCopies take_copies(int64_t slot);
  void copied(int64_t slot);

  // Moves a step's rows (in slot order) into consecutive slots where a run of free slots allows
  // it: each moved row's slot and block tables are set, its old blocks cached as a leaving
  // sequence's are. Returns the moves (the realigner copies their blocks before the step).
  std::vector<SlotMove> plan_moves(std::vector<SlotRow>& rows);
  // Whether attention reads these rows' keys as one view: consecutive slots, each in its own row.
  bool viewed(const std::vector<SlotRow>& rows) const;

  // The slot's block tables, for a forward's row (model/slot_row.h).
  const BlockTable& target_table(int64_t slot) const { return tables_.at(static_cast<size_t>(slot)).target; }
  const BlockTable& draft_table(int64_t slot) const { return tables_.at(static_cast<size_t>(slot)).draft; }

 private:
  struct SlotBlocks {
    BlockTable target, draft;            // the live sequence's tables in each store
    BlockTable target_from, draft_from;  // cached blocks copied into them, held until copied
    BlockCopies pending;                 // those copies, until a job takes them
    uint64_t released = 0;               // when its last sequence left (what it caches is that old)
  };
  struct Hits {
    BlockTable target, draft;
  };
  Hits hits(const std::vector<int64_t>& tokens) const;
  // The lowest free slot whose first n own blocks cache nothing, else the one whose sequence
  // left longest ago; -1: none free.
  int64_t coldest_free_slot(int64_t n) const;
  // A cached prefix into a newcomer's table: as it is when it lies in the slot's own blocks;
  // copied into them when they are free and cache nothing; shared otherwise. Returns the copies.
  int64_t take_prefix(BlockPool& pool, const BlockTable& hit, int64_t slot, BlockTable& table, BlockTable& from,
                      std::vector<std::pair<int64_t, int64_t>>& copies);
  void release_tables(SlotBlocks& t);  // every table of the slot back to its pool

  bool has_draft_;
  int64_t block_size_;
  SlotTable slots_;
  BlockPool target_pool_, draft_pool_;
  std::vector<SlotBlocks> tables_;  // by slot
  uint64_t releases_ = 0;
};

}  // namespace exspec
