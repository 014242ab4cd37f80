// The in-place KV store of one model (issue 18): every live sequence owns one slot, a
// preallocated [kv_heads, capacity, head_dim] region per layer, for its whole life. A forward
// over any subset of slots writes each row's new keys and values at that row's own offset
// (index_put_) and attention reads each row's own prefix through a mask built from per-row
// lengths. Nothing is ever realigned: a batch is a list of slots, forming one copies no cache.
//
// Slots rather than paged blocks: with no custom kernels, attention over blocks would gather
// each row's blocks into a contiguous tensor at every layer of every forward (a copy of the
// whole prefix), which is the cost this store exists to remove. A slot is contiguous, so a batch
// whose slots are consecutive reads its keys as a view; any other subset reads them with one
// index_select of the prefix (a read of what attention reads anyway, no write-back). Slots are
// handed out lowest first (model/slot_table.h), so the live sequences of a continuous batch stay
// consecutive. The price is memory: each slot is sized for the longest context, used or not.
//
// Lengths: a slot's length counts the positions that hold content. A forward writes its new
// positions after the length and advances it by what it wrote; the caller then sets the length
// to what it keeps (a verification that accepted a drafts keeps a + 1 of its K + 1 positions).
// Positions beyond the length are stale but finite (the store starts zeroed), never read as
// content, and overwritten by the next forward.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace exspec {

// One forward's rows: slot b receives counts[b] new tokens (right-padded to T) at positions
// starts[b] ... Built by KVStore::plan; used by the decoder at every layer.
struct SlotForward {
  std::vector<int64_t> slots, starts, counts;
  int64_t T = 0;       // new tokens per row, padding included
  int64_t window = 0;  // key positions attention reads: max(starts + counts)
  at::Tensor positions;  // [B, T] int64: starts[b] + t (content positions)
  at::Tensor blocked;    // [B, T, window] bool, true where a query may not look; undefined if none
  int64_t first = -1;    // slots are first, first + 1, ...: the keys are a view, no gather
  at::Tensor rows;       // [B] int64 slot indices (for the gather when first < 0)
  at::Tensor write_slot, write_pos;  // per content token: slot, position
  at::Tensor content;  // per content token: b * T + t; undefined when no row is padded
  int64_t batch() const { return static_cast<int64_t>(slots.size()); }
};

class KVStore {
 public:
  KVStore() = default;
  KVStore(int64_t num_layers, int64_t slots, int64_t kv_heads, int64_t head_dim, int64_t capacity,
          at::ScalarType dtype, at::Device device);

  int64_t num_layers() const { return static_cast<int64_t>(k_.size()); }
  int64_t slots() const { return static_cast<int64_t>(length_.size()); }
  int64_t capacity() const { return capacity_; }
  // Bytes held by the store's tensors (what its sizing costs).
  int64_t bytes() const;

  // Which slots are taken is not the store's business (model/slot_table.h): a slot given to a
  // new sequence starts with set_length(slot, 0).
  int64_t length(int64_t slot) const { return length_.at(slot); }
  // Keeps the first n positions of the slot as content (n <= capacity).
  void set_length(int64_t slot, int64_t n);

  // The slot's content: [kv_heads, length, head_dim] views (tests, debugging).
  at::Tensor keys(int64_t layer, int64_t slot) const;
  at::Tensor values(int64_t layer, int64_t slot) const;

  // The decoder's protocol for one forward: plan() (row b writes counts[b] tokens after its
  // length; T is the padded width), then write_read() per layer, then advance().
  SlotForward plan(const std::vector<int64_t>& slots, const std::vector<int64_t>& counts, int64_t T) const;
  // k, v: the content tokens' keys and values, [N, kv_heads, head_dim] in any shape that lists
  // them in order (b, then t; [B, T, ...] when no row is padded). Stores them; returns the keys
  // and values attention reads, [B, kv_heads, window, head_dim].
  std::pair<at::Tensor, at::Tensor> write_read(int64_t layer, const SlotForward& f, const at::Tensor& k,
                                               const at::Tensor& v);
  void advance(const SlotForward& f);

  // Copies the first n positions of slot `from` into slot `to`, whose length becomes n (`from`
  // keeps its contents). The caller makes sure no forward touches either slot meanwhile.
  void copy_slot(int64_t from, int64_t to, int64_t n);

 private:
  std::vector<at::Tensor> k_, v_;  // [slots, kv_heads, capacity, head_dim]
  std::vector<int64_t> length_;
  int64_t capacity_ = 0;
};

}  // namespace exspec
