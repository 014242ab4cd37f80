#include "model/oracle/kv_cache.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

namespace exspec {

KVCache::KVCache(int64_t num_layers, int64_t batch, int64_t kv_heads, int64_t head_dim, at::ScalarType dtype,
                 at::Device device, int64_t capacity) {
  auto opts = at::TensorOptions().dtype(dtype).device(device);
  for (int64_t l = 0; l < num_layers; ++l) {
    k_.push_back(at::empty({batch, kv_heads, capacity, head_dim}, opts));
    v_.push_back(at::empty({batch, kv_heads, capacity, head_dim}, opts));
  }
}

KVCache KVCache::from_tensors(std::vector<at::Tensor> keys, std::vector<at::Tensor> values) {
  if (keys.size() != values.size()) throw std::invalid_argument("KVCache::from_tensors: layer count mismatch");
  KVCache c;
  c.k_ = std::move(keys);
  c.v_ = std::move(values);
  c.len_ = c.k_.empty() ? 0 : c.k_[0].size(2);
  return c;
}

int64_t KVCache::batch() const { return k_.empty() ? 0 : k_[0].size(0); }
int64_t KVCache::capacity() const { return k_.empty() ? 0 : k_[0].size(2); }

at::Tensor KVCache::keys(int64_t layer) const { return k_[layer].narrow(2, 0, len_); }
at::Tensor KVCache::values(int64_t layer) const { return v_[layer].narrow(2, 0, len_); }

void KVCache::reserve(int64_t extra) {
  const int64_t need = len_ + extra;
  if (need <= capacity()) return;
  // Grow geometrically so that a long generation reallocates O(log n) times.
  const int64_t cap = std::max(need, capacity() + capacity() / 2 + 16);
  for (auto* bufs : {&k_, &v_}) {
    for (auto& b : *bufs) {
      at::Tensor nb = at::empty({b.size(0), b.size(1), cap, b.size(3)}, b.options());
      if (len_ > 0) nb.narrow(2, 0, len_).copy_(b.narrow(2, 0, len_));
      b = nb;
    }
  }
}

std::pair<at::Tensor, at::Tensor> KVCache::append(int64_t layer, const at::Tensor& k, const at::Tensor& v) {
  const int64_t t = k.size(2);
  if (len_ + t > capacity()) throw std::logic_error("KVCache::append without reserve()");
  k_[layer].narrow(2, len_, t).copy_(k);
  v_[layer].narrow(2, len_, t).copy_(v);
  return {k_[layer].narrow(2, 0, len_ + t), v_[layer].narrow(2, 0, len_ + t)};
}

void KVCache::truncate(int64_t n) {
  if (n < 0 || n > len_) throw std::out_of_range("KVCache::truncate beyond the cached length");
  len_ = n;
}

KVCache KVCache::select_rows(const at::Tensor& rows) const {
  KVCache c;
  at::Tensor idx = rows.to(k_.empty() ? at::Device(at::kCPU) : k_[0].device(), at::kLong);
  for (size_t l = 0; l < k_.size(); ++l) {
    c.k_.push_back(k_[l].index_select(0, idx));
    c.v_.push_back(v_[l].index_select(0, idx));
  }
  c.len_ = len_;
  return c;
}

KVCache KVCache::gather_positions(const at::Tensor& index, int64_t reserve) const {
  KVCache c;
  const int64_t B = index.size(0), L = index.size(1);
  for (size_t l = 0; l < k_.size(); ++l) {
    const int64_t H = k_[l].size(1), D = k_[l].size(3);
    at::Tensor idx = index.to(k_[l].device()).view({B, 1, L, 1}).expand({B, H, L, D});
    for (auto [src, dst] : {std::make_pair(&k_[l], &c.k_), std::make_pair(&v_[l], &c.v_)}) {
      at::Tensor buf = at::empty({B, H, L + reserve, D}, src->options());
      at::Tensor out = buf.narrow(2, 0, L);
      at::gather_out(out, src->narrow(2, 0, len_), 2, idx);
      dst->push_back(buf);
    }
  }
  c.len_ = L;
  return c;
}

KVCache KVCache::stack_right_aligned(const std::vector<const KVCache*>& rows, int64_t reserve) {
  KVCache c;
  if (rows.empty()) return c;
  const int64_t B = static_cast<int64_t>(rows.size());
  int64_t L = 0;
  for (const KVCache* r : rows) L = std::max(L, r->length());
  // Rows may be empty caches (a sequence the draft has not seen yet): zero-length rows, shaped
  // like the first row that has tensors.
  const KVCache* shape = nullptr;
  for (const KVCache* r : rows)
    if (!r->empty()) {
      shape = r;
      break;
    }
  if (!shape) return c;
  const int64_t layers = shape->num_layers();
  for (int64_t l = 0; l < layers; ++l) {
    for (int kv = 0; kv < 2; ++kv) {
      const at::Tensor& proto = kv ? shape->v_[l] : shape->k_[l];
      at::Tensor buf = at::empty({B, proto.size(1), L + reserve, proto.size(3)}, proto.options());
      // Row by row with copy_, never at::cat_out into buf's view: with one row and one kv head
      // the view [1, 1, L, D] counts as contiguous (a size-1 dim's stride is ignored), and
      // libtorch 1.13's contiguous cat kernel then divides by that stride (the whole buffer's)
      // and copies nothing, leaving at::empty's memory as the cache of a one-row batch.
      for (int64_t b = 0; b < B; ++b) {
        const int64_t n = rows[b]->length();
        at::Tensor row = buf.narrow(0, b, 1);
        if (n < L) row.narrow(2, 0, L - n).zero_();
        if (n > 0) row.narrow(2, L - n, n).copy_(kv ? rows[b]->values(l) : rows[b]->keys(l));
      }
      (kv ? c.v_ : c.k_).push_back(buf);
    }
  }
  c.len_ = L;
  return c;
}

}  // namespace exspec
