#include "model/kv_store.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace exspec {

KVStore::KVStore(int64_t num_layers, int64_t slots, int64_t kv_heads, int64_t head_dim, int64_t capacity,
                 at::ScalarType dtype, at::Device device)
    : length_(slots, 0), capacity_(capacity) {
  if (slots < 1 || capacity < 1) throw std::invalid_argument("KVStore: slots and capacity must be >= 1");
  // Zeroed, not empty: a position beyond a row's length is read with weight exactly 0, and
  // 0 * NaN (uninitialised memory) would still poison the row.
  auto opts = at::TensorOptions().dtype(dtype).device(device);
  for (int64_t l = 0; l < num_layers; ++l) {
    k_.push_back(at::zeros({slots, kv_heads, capacity, head_dim}, opts));
    v_.push_back(at::zeros({slots, kv_heads, capacity, head_dim}, opts));
  }
}

int64_t KVStore::bytes() const {
  int64_t n = 0;
  for (const auto* bufs : {&k_, &v_})
    for (const auto& b : *bufs) n += b.numel() * static_cast<int64_t>(b.element_size());
  return n;
}

void KVStore::set_length(int64_t slot, int64_t n) {
  if (n < 0 || n > capacity_) throw std::out_of_range("KVStore::set_length beyond the slot's capacity");
  length_.at(slot) = n;
}

at::Tensor KVStore::keys(int64_t layer, int64_t slot) const { return k_[layer][slot].narrow(1, 0, length_.at(slot)); }
at::Tensor KVStore::values(int64_t layer, int64_t slot) const { return v_[layer][slot].narrow(1, 0, length_.at(slot)); }

SlotForward KVStore::plan(const std::vector<int64_t>& slots, const std::vector<int64_t>& counts, int64_t T) const {
  const int64_t B = static_cast<int64_t>(slots.size());
  if (B == 0 || static_cast<int64_t>(counts.size()) != B) throw std::invalid_argument("KVStore::plan: one count per slot");
  SlotForward f;
  f.slots = slots, f.counts = counts, f.T = T;
  bool consecutive = true, full = true;
  std::vector<int64_t> wslot, wpos, wtok;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t s = slots[b];
    if (s < 0 || s >= this->slots()) throw std::invalid_argument("KVStore::plan: no such slot");
    if (counts[b] < 1 || counts[b] > T) throw std::invalid_argument("KVStore::plan: a row's count is outside 1..T");
    if (length_[s] + counts[b] > capacity_) throw std::length_error("KVStore::plan: a sequence outgrows its slot");
    if (std::count(slots.begin(), slots.begin() + b, s)) throw std::invalid_argument("KVStore::plan: a slot twice");
    f.starts.push_back(length_[s]);
    f.window = std::max(f.window, length_[s] + counts[b]);
    consecutive = consecutive && s == slots[0] + b;
    full = full && counts[b] == T;
    for (int64_t t = 0; t < counts[b]; ++t) wslot.push_back(s), wpos.push_back(length_[s] + t), wtok.push_back(b * T + t);
  }
  const at::Device dev = k_.empty() ? at::Device(at::kCPU) : k_[0].device();
  auto longs = [&](const std::vector<int64_t>& v) { return at::tensor(v, at::kLong).to(dev); };
  at::Tensor starts = at::tensor(f.starts, at::kLong).view({B, 1});
  f.positions = (starts + at::arange(T, at::kLong).view({1, T})).to(dev);
  // Each query sees its row's prefix and itself: key j <= start + t. A decode step whose rows
  // all end at the window's edge blocks nothing, and every layer skips the mask.
  const bool none_blocked = T == 1 && std::all_of(f.starts.begin(), f.starts.end(), [&](int64_t s) { return s + 1 == f.window; });
  if (!none_blocked)
    f.blocked = (at::arange(f.window, at::kLong).view({1, 1, f.window}) > f.positions.to(at::kCPU).view({B, T, 1})).to(dev);
  f.first = consecutive ? slots[0] : -1;
  if (!consecutive) f.rows = longs(slots);
  f.write_slot = longs(wslot);
  f.write_pos = longs(wpos);
  if (!full) f.content = longs(wtok);
  return f;
}

std::pair<at::Tensor, at::Tensor> KVStore::write_read(int64_t layer, const SlotForward& f, const at::Tensor& k,
                                                      const at::Tensor& v) {
  using at::indexing::Slice;
  const int64_t B = f.batch(), H = k.size(2), D = k.size(3);
  std::pair<at::Tensor, at::Tensor> out;
  for (auto [src, store, dst] : {std::make_tuple(&k, &k_[layer], &out.first), std::make_tuple(&v, &v_[layer], &out.second)}) {
    at::Tensor tokens = src->reshape({-1, H, D});
    store->index_put_({f.write_slot, Slice(), f.write_pos}, tokens);                // [N, H, D] at (slot, :, pos)
    at::Tensor w = store->narrow(2, 0, f.window);
    *dst = f.first >= 0 ? w.narrow(0, f.first, B) : w.index_select(0, f.rows);
  }
  return out;
}

void KVStore::copy_slot(int64_t from, int64_t to, int64_t n) {
  // The slot's length may be stale (the counters of model/slot_row.h are the truth): n is the
  // caller's count of valid positions.
  if (from == to || from < 0 || from >= slots()) throw std::invalid_argument("KVStore::copy_slot: bad slots");
  set_length(to, n);  // checks `to` and n
  for (auto* bufs : {&k_, &v_})
    for (at::Tensor& b : *bufs) b[to].narrow(1, 0, n).copy_(b[from].narrow(1, 0, n));
}

void KVStore::advance(const SlotForward& f) {
  for (int64_t b = 0; b < f.batch(); ++b) length_[f.slots[b]] = f.starts[b] + f.counts[b];
}

}  // namespace exspec
