// The dense forward's per-layer key/value cache of one batch (model/oracle/dense_forward.h; the
// paper's batches hold theirs too, model/paper/spec_batch.h): rectangular
// [B, kv_heads, length, head_dim] views over buffers with spare capacity, so that appending a
// step does not copy the whole cache.
// A cache has exactly one owner at a time (the batch or the sequence that holds it); the owner
// may append in place, everyone else treats it as read-only.
#pragma once
#include <ATen/core/Tensor.h>

#include <utility>
#include <vector>

namespace exspec {

class KVCache {
 public:
  KVCache() = default;
  KVCache(int64_t num_layers, int64_t batch, int64_t kv_heads, int64_t head_dim, at::ScalarType dtype,
          at::Device device, int64_t capacity = 0);
  // Adopts full tensors (each [B, kv_heads, L, head_dim]); length becomes L.
  static KVCache from_tensors(std::vector<at::Tensor> keys, std::vector<at::Tensor> values);

  bool empty() const { return k_.empty(); }
  int64_t num_layers() const { return static_cast<int64_t>(k_.size()); }
  int64_t batch() const;
  int64_t length() const { return len_; }
  int64_t capacity() const;

  at::Tensor keys(int64_t layer) const;    // [B, kv_heads, length, head_dim] view
  at::Tensor values(int64_t layer) const;

  // The decoder's protocol for one forward over T new positions: reserve(T), then per layer
  // append() (returns the views over length + T positions), then advance(T).
  void reserve(int64_t extra);
  std::pair<at::Tensor, at::Tensor> append(int64_t layer, const at::Tensor& k, const at::Tensor& v);
  void advance(int64_t t) { len_ += t; }

  // Keeps the first n positions (drops rejected drafts).
  void truncate(int64_t n);
  // A new cache holding only the given rows (int64 indices on any device).
  KVCache select_rows(const at::Tensor& rows) const;
  // A new cache whose row b, position j holds this cache's row b, position index[b, j]
  // (index [B, L] int64), with `reserve` spare positions of capacity.
  KVCache gather_positions(const at::Tensor& index, int64_t reserve) const;
  // Stacks single-row caches into rows of a new batch cache, each row's content right-aligned
  // (left padding zero-filled: padded keys and values must be finite, never read garbage).
  // Empty caches count as zero-length rows; if every row is empty, so is the result.
  static KVCache stack_right_aligned(const std::vector<const KVCache*>& rows, int64_t reserve);

 private:
  std::vector<at::Tensor> k_, v_;  // [B, kv_heads, capacity, head_dim]
  int64_t len_ = 0;
};

}  // namespace exspec
