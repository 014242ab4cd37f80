#include "model/kv_store.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model/to_device.h"

namespace exspec {

KVStore::KVStore(int64_t num_layers, int64_t slots, int64_t kv_heads, int64_t head_dim, int64_t capacity,
                 at::ScalarType dtype, at::Device device, int64_t block_size)
    : slots_(slots) {
  if (slots < 1 || capacity < 1 || block_size < 0) throw std::invalid_argument("KVStore: slots and capacity must be >= 1");
  block_size_ = block_size == 0 ? capacity : block_size;
  capacity_ = (capacity + block_size_ - 1) / block_size_ * block_size_;
  // Zeroed, not empty: a position beyond a row's length is read with weight exactly 0, and
  // 0 * NaN (uninitialised memory) would still poison the row.
  auto opts = at::TensorOptions().dtype(dtype).device(device);
  for (int64_t l = 0; l < num_layers; ++l) {
    k_.push_back(at::zeros({slots, kv_heads, capacity_, head_dim}, opts));
    v_.push_back(at::zeros({slots, kv_heads, capacity_, head_dim}, opts));
  }
}

int64_t KVStore::bytes() const {
  int64_t n = 0;
  for (const auto* bufs : {&k_, &v_})
    for (const auto& b : *bufs) n += b.numel() * static_cast<int64_t>(b.element_size());
  return n;
}

int64_t KVStore::room(const Table& t) const {
  return t.empty() ? capacity_ : static_cast<int64_t>(t.size()) * block_size_;
}

std::pair<int64_t, int64_t> KVStore::locate(int64_t slot, const Table& t, int64_t p) const {
  if (t.empty()) return {slot, p};
  const int64_t per_row = capacity_ / block_size_, id = t[static_cast<size_t>(p / block_size_)];
  return {id / per_row, id % per_row * block_size_ + p % block_size_};
}

bool KVStore::at_home(int64_t slot, const Table& t, int64_t n) const {
  if (t.empty()) return true;
  const int64_t per_row = capacity_ / block_size_;
  for (int64_t i = 0; i * block_size_ < n; ++i)
    if (t[static_cast<size_t>(i)] != slot * per_row + i) return false;
  return true;
}

at::Tensor KVStore::keys(int64_t layer, int64_t slot, int64_t length, const Table& blocks) const {
  return content(k_.at(layer), slot, length, blocks);
}
at::Tensor KVStore::values(int64_t layer, int64_t slot, int64_t length, const Table& blocks) const {
  return content(v_.at(layer), slot, length, blocks);
}

at::Tensor KVStore::content(const at::Tensor& buf, int64_t slot, int64_t length, const Table& table) const {
  if (slot < 0 || slot >= slots_ || length < 0 || length > room(table)) throw std::out_of_range("KVStore: no such content");
  std::vector<at::Tensor> parts;
  for (int64_t p = 0; p < length; p += block_size_) {
    const auto [row, at] = locate(slot, table, p);
    parts.push_back(buf[row].narrow(1, at, std::min(block_size_, length - p)));
  }
  return parts.empty() ? buf[slot].narrow(1, 0, 0) : at::cat(parts, 1);
}

SlotForward KVStore::plan(const std::vector<SlotSpan>& rows, int64_t T) const {
  const int64_t B = static_cast<int64_t>(rows.size());
  if (B == 0) throw std::invalid_argument("KVStore::plan: no rows");
  SlotForward f;
  f.T = T;
  bool consecutive = true, full = true, home = true;
  std::vector<int64_t> wslot, wpos, wtok;
  for (int64_t b = 0; b < B; ++b) {
    const SlotSpan& r = rows[b];
    const int64_t s = r.slot, start = r.start, count = r.count;
    if (s < 0 || s >= slots_) throw std::invalid_argument("KVStore::plan: no such slot");
    if (count < 1 || count > T) throw std::invalid_argument("KVStore::plan: a row's count is outside 1..T");
    if (start < 0 || start + count > room(r.blocks)) throw std::length_error("KVStore::plan: a sequence outgrows its blocks");
    if (std::count(f.slots.begin(), f.slots.end(), s)) throw std::invalid_argument("KVStore::plan: a slot twice");
    for (int64_t id : r.blocks)
      if (id < 0 || id >= blocks()) throw std::invalid_argument("KVStore::plan: no such block");
    f.slots.push_back(s), f.starts.push_back(start), f.counts.push_back(count), f.tables.push_back(r.blocks);
    f.window = std::max(f.window, start + count);
    consecutive = consecutive && s == rows[0].slot + b;
    full = full && count == T;
    home = home && at_home(s, r.blocks, start + count);
    for (int64_t t = 0; t < count; ++t) {
      const auto [row, at] = locate(s, r.blocks, start + t);
      wslot.push_back(row), wpos.push_back(at), wtok.push_back(b * T + t);
    }
  }
  const at::Device dev = k_.empty() ? at::Device(at::kCPU) : k_[0].device();
  auto longs = [&](const std::vector<int64_t>& v) { return to_device(at::tensor(v, at::kLong), dev); };
  // A gather copies whole blocks (bs x head_dim contiguous elements each): the window then ends
  // at a block's end, and the positions past a row's content are masked as always.
  const bool gathered = !(home && f.window <= capacity_);
  if (gathered) f.window = (f.window + block_size_ - 1) / block_size_ * block_size_;
  at::Tensor starts = at::tensor(f.starts, at::kLong).view({B, 1});
  const at::Tensor positions = starts + at::arange(T, at::kLong).view({1, T});  // on the host
  f.positions = to_device(positions, dev);
  // Each query sees its row's prefix and itself: key j <= start + t. A decode step whose rows
  // all end at the window's edge blocks nothing, and every layer skips the mask.
  const bool none_blocked = T == 1 && std::all_of(f.starts.begin(), f.starts.end(), [&](int64_t s) { return s + 1 == f.window; });
  if (!none_blocked)
    f.blocked = to_device(at::arange(f.window, at::kLong).view({1, 1, f.window}) > positions.view({B, T, 1}), dev);
  if (gathered) {
    f.gather = to_device(gather_index(f, k_.empty() ? 1 : k_[0].size(1)), dev);
  } else {
    f.first = consecutive ? f.slots[0] : -1;
    if (!consecutive) f.rows = longs(f.slots);
  }
  f.write_slot = longs(wslot);
  f.write_pos = longs(wpos);
  if (!full) f.content = longs(wtok);
  return f;
}

// Row b, head h, its i-th block: where the tensor viewed as [slots * heads * blocks a row,
// block_size * head_dim] holds it. Blocks past a row's content (masked) read its first one.
at::Tensor KVStore::gather_index(const SlotForward& f, int64_t heads) const {
  const int64_t B = f.batch(), nb = f.window / block_size_, per_row = capacity_ / block_size_;
  at::Tensor idx = at::empty({B, heads, nb}, at::kLong);
  auto a = idx.accessor<int64_t, 3>();
  for (int64_t b = 0; b < B; ++b) {
    const int64_t s = f.slots[b], end = f.starts[b] + f.counts[b];
    for (int64_t i = 0; i < nb; ++i) {
      const auto [row, at] = locate(s, f.tables[b], i * block_size_ < end ? i * block_size_ : 0);
      for (int64_t h = 0; h < heads; ++h) a[b][h][i] = (row * heads + h) * per_row + at / block_size_;
    }
  }
  return idx.view({-1});
}

namespace {

// N tokens into store [rows, H, capacity, D] (contiguous, on the CPU) at (slot[n], :, pos[n]),
// one head's row at a time. Token n is row n / T's token n % T: head h of it at src + (n / T * sb
// + n % T * st + h * sh) elements, its D elements contiguous.
void copy_token_rows(at::Tensor& store, const int64_t* slot, const int64_t* pos, int64_t N, const void* src, int64_t T,
                     int64_t sb, int64_t st, int64_t sh) {
  const int64_t H = store.size(1), cap = store.size(2), D = store.size(3);
  const size_t e = store.element_size(), row = static_cast<size_t>(D) * e;
  auto* dst = static_cast<char*>(store.data_ptr());
  const auto* from = static_cast<const char*>(src);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      std::memcpy(dst + static_cast<size_t>(((slot[n] * H + h) * cap + pos[n]) * D) * e,
                  from + static_cast<size_t>(n / T * sb + n % T * st + h * sh) * e, row);
}

// tokens [N, H, D] into store at (slot[n], :, pos[n]) on the CPU: what index_put_ writes, without
// its dispatch (two calls a layer, a noticeable part of a small step). False where it does not apply.
bool copy_rows_cpu(at::Tensor& store, const at::Tensor& tokens, const at::Tensor& slot, const at::Tensor& pos) {
  if (!store.device().is_cpu() || !store.is_contiguous() || tokens.scalar_type() != store.scalar_type() ||
      tokens.stride(2) != 1 || slot.scalar_type() != at::kLong || pos.scalar_type() != at::kLong ||
      !slot.is_contiguous() || !pos.is_contiguous())
    return false;
  copy_token_rows(store, slot.data_ptr<int64_t>(), pos.data_ptr<int64_t>(), tokens.size(0), tokens.data_ptr(), 1,
                  tokens.stride(0), 0, tokens.stride(1));
  return true;
}

}  // namespace

std::pair<at::Tensor, at::Tensor> KVStore::write_read(int64_t layer, const SlotForward& f, const at::Tensor& k,
                                                      const at::Tensor& v) {
  using at::indexing::Slice;
  const int64_t B = f.batch(), H = k.size(2), D = k.size(3);
  std::pair<at::Tensor, at::Tensor> out;
  for (auto [src, store, dst] : {std::make_tuple(&k, &k_[layer], &out.first), std::make_tuple(&v, &v_[layer], &out.second)}) {
    at::Tensor tokens = src->reshape({-1, H, D});
    if (!copy_rows_cpu(*store, tokens, f.write_slot, f.write_pos))
      store->index_put_({f.write_slot, Slice(), f.write_pos}, tokens);              // [N, H, D] at (row, :, pos)
    if (f.gather.defined()) {
      *dst = store->view({-1, block_size_ * D}).index_select(0, f.gather).view({B, H, f.window, D});
      continue;
    }
    at::Tensor w = store->narrow(2, 0, f.window);
    *dst = f.first >= 0 ? w.narrow(0, f.first, B) : w.index_select(0, f.rows);
  }
  return out;
}

bool KVStore::write_read_direct(int64_t layer, const SlotForward& f, at::ScalarType dtype, const Rows& k, const Rows& v,
                                Read& read) {
  at::Tensor& ks = k_[layer];
  at::Tensor& vs = v_[layer];
  if (!ks.device().is_cpu() || f.first < 0 || f.gather.defined() || f.content.defined() || ks.scalar_type() != dtype ||
      !ks.is_contiguous() || !vs.is_contiguous())
    return false;
  const int64_t H = ks.size(1), cap = ks.size(2), D = ks.size(3);
  const size_t e = ks.element_size();
  for (auto [src, store] : {std::make_pair(&k, &ks), std::make_pair(&v, &vs)})  // unpadded: f.T tokens a row
    copy_token_rows(*store, f.write_slot.data_ptr<int64_t>(), f.write_pos.data_ptr<int64_t>(), f.batch() * f.T, src->p,
                    f.T, src->sb, src->st, D);
  const size_t first = static_cast<size_t>(f.first * H * cap * D) * e;
  read.k = static_cast<const char*>(ks.data_ptr()) + first;
  read.v = static_cast<const char*>(vs.data_ptr()) + first;
  read.sb = H * cap * D, read.sh = cap * D, read.sp = D;
  return true;
}

void KVStore::copy_blocks(const std::vector<std::pair<int64_t, int64_t>>& moves) {
  const int64_t per_row = capacity_ / block_size_;
  for (const auto& [from, to] : moves) {
    if (from == to || from < 0 || to < 0 || from >= blocks() || to >= blocks())
      throw std::invalid_argument("KVStore::copy_blocks: bad blocks");
    for (auto* bufs : {&k_, &v_})
      for (at::Tensor& b : *bufs)
        b[to / per_row].narrow(1, to % per_row * block_size_, block_size_)
            .copy_(b[from / per_row].narrow(1, from % per_row * block_size_, block_size_));
  }
}

}  // namespace exspec
