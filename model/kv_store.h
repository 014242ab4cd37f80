// The in-place KV store of one model (issue 18), paged (issue 30): per layer a preallocated
// [slots, kv_heads, capacity, head_dim] tensor, read as blocks of `block_size` positions. Each
// live sequence owns a slot; its block table (the scheduler decides which blocks:
// actors/scheduler/block_manager.h) says where its positions live; an empty table means its
// slot's own row, block by block. A forward over any subset of slots writes each row's new keys
// and values at that row's own positions (index_put_) and attention reads each row's prefix
// through a mask built from per-row lengths. Nothing is ever realigned: a batch is a list of
// slots, forming one copies no cache.
//
// The store keeps tensors only. What it holds of each sequence (positions, blocks) is the
// sequence's own record (actors/scheduler/sequence_pool.h), handed to every forward as a
// SlotSpan per row: nothing here is set before a forward or remembered after it.
//
// How attention reads a step's keys, without custom kernels:
//   view    the rows' slots are consecutive and each row's table is its own row's blocks in
//           order (the common case: actors/scheduler/block_pool.h hands out a slot's own blocks first);
//   rows    the same, slots not consecutive: one index_select of the slots' rows;
//   gather  any row holds blocks elsewhere (a prefix cached by another slot, blocks borrowed
//           beyond its row): one index_select of every row's blocks, a copy of the prefix at
//           every layer of every forward. docs/speculation.md has the measured cost of each.
//
// Positions: a row's `start` counts the positions of its sequence that hold content; a forward
// writes its new positions after them. What a verification keeps (a + 1 of its K + 1 positions)
// is the caller's count. Positions beyond a sequence's count are stale but finite (the store
// starts zeroed), never read as content, and overwritten by a later forward.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace exspec {

class StepState;

// One row of an in-place forward: `count` new tokens for the sequence in `slot`, written after
// the `start` positions the store holds of it, in the blocks of `blocks` (empty: the slot's own
// row, block by block).
struct SlotSpan {
  int64_t slot = -1, start = 0, count = 0;
  std::vector<int64_t> blocks;
};

// One forward's rows: slot b receives counts[b] new tokens (right-padded to T) at positions
// starts[b] ... Built by KVStore::plan; used by the decoder at every layer.
struct SlotForward {
  std::vector<int64_t> slots, starts, counts;
  std::vector<std::vector<int64_t>> tables;  // each row's blocks (empty: its slot's own row)
  int64_t T = 0;       // new tokens per row, padding included
  int64_t window = 0;  // key positions attention reads: max(starts + counts)
  at::Tensor positions;  // [B, T] int64: starts[b] + t (content positions)
  at::Tensor blocked;    // [B, T, window] bool, true where a query may not look; undefined if none
  int64_t first = -1;    // view: slots are first, first + 1, ... with their own blocks
  at::Tensor rows;       // rows: [B] int64 slot indices
  at::Tensor gather;     // gather: [B * kv_heads * window / block_size] int64 block indices into
                         // [slots * kv_heads * capacity / block_size, block_size * head_dim]
  at::Tensor write_slot, write_pos;  // per content token: the row and position of the tensor that hold it
  at::Tensor content;  // per content token: b * T + t; undefined when no row is padded
  int64_t batch() const { return static_cast<int64_t>(slots.size()); }
};

class KVStore {
 public:
  KVStore() = default;
  // capacity: positions of a slot's row, rounded up to whole blocks (block_size 0: one block).
  KVStore(int64_t num_layers, int64_t slots, int64_t kv_heads, int64_t head_dim, int64_t capacity,
          at::ScalarType dtype, at::Device device, int64_t block_size = 0);

  int64_t num_layers() const { return static_cast<int64_t>(k_.size()); }
  int64_t slots() const { return slots_; }
  int64_t capacity() const { return capacity_; }
  int64_t block_size() const { return block_size_; }
  int64_t blocks() const { return slots() * (capacity_ / block_size_); }
  // Bytes held by the store's tensors (what its sizing costs).
  int64_t bytes() const;

  // The first `length` positions of the sequence in `slot` with these blocks: [kv_heads, length,
  // head_dim] (tests, debugging).
  at::Tensor keys(int64_t layer, int64_t slot, int64_t length, const std::vector<int64_t>& blocks = {}) const;
  at::Tensor values(int64_t layer, int64_t slot, int64_t length, const std::vector<int64_t>& blocks = {}) const;

  // The decoder's protocol for one forward: plan() (row b writes rows[b].count tokens after its
  // start; T is the padded width), then write_read() per layer.
  SlotForward plan(const std::vector<SlotSpan>& rows, int64_t T) const;
  // k, v: the content tokens' keys and values, [N, kv_heads, head_dim] in any shape that lists
  // them in order (b, then t; [B, T, ...] when no row is padded). Stores them; returns the keys
  // and values attention reads, [B, kv_heads, window, head_dim].
  std::pair<at::Tensor, at::Tensor> write_read(int64_t layer, const SlotForward& f, const at::Tensor& k,
                                               const at::Tensor& v);

  // write_read without tensors (model/attention.h attention_in_store): on the CPU, where the
  // rows' slots are consecutive in their own blocks (f.first >= 0) and no row is padded, writes
  // token (b, t)'s keys and values (elements of `dtype`, [kv_heads, head_dim] at p + b * sb +
  // t * st of k and of v, heads head_dim apart) and says where attention reads the layer's:
  // `read`. False, and nothing written, elsewhere: the caller goes through write_read.
  struct Rows {
    const void* p = nullptr;
    int64_t sb = 0, st = 0;
  };
  struct Read {
    const void* k = nullptr;
    const void* v = nullptr;
    int64_t sb = 0, sh = 0, sp = 0;  // [B, kv_heads, window, head_dim] element strides
  };
  bool write_read_direct(int64_t layer, const SlotForward& f, at::ScalarType dtype, const Rows& k, const Rows& v,
                         Read& read);

  // Copies whole blocks (from, to) in every layer. The caller makes sure no forward touches
  // either meanwhile.
  void copy_blocks(const std::vector<std::pair<int64_t, int64_t>>& moves);

  // Bucketed forwards (model/step_runner.h): the static buffers and graphs of this store's
  // forwards; none (the default): every forward runs at its own row count.
  void set_step(std::shared_ptr<StepState> step) { step_ = std::move(step); }
  StepState* step() const { return step_.get(); }

 private:
  using Table = std::vector<int64_t>;
  // Where position p of the sequence in `slot` with `table` lives: (row, position in the row).
  std::pair<int64_t, int64_t> locate(int64_t slot, const Table& table, int64_t p) const;
  int64_t room(const Table& table) const;  // positions a table's blocks hold
  // Whether the first n positions are in the slot's own row, in order.
  bool at_home(int64_t slot, const Table& table, int64_t n) const;
  at::Tensor gather_index(const SlotForward& f, int64_t heads) const;
  at::Tensor content(const at::Tensor& buf, int64_t slot, int64_t length, const Table& table) const;

  std::vector<at::Tensor> k_, v_;  // [slots, kv_heads, capacity, head_dim]
  int64_t slots_ = 0, capacity_ = 0, block_size_ = 1;
  std::shared_ptr<StepState> step_;
};

}  // namespace exspec
