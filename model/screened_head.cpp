#include "model/screened_head.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/kernels/kernel_threads.h"
#include "model/kernels/q4_screen.h"
#include "model/kernels/row_ops.h"
#include "model/weight_tiles.h"

namespace exspec {
namespace {

constexpr int64_t kSliceRows = 1024;  // head rows dequantised at a time while the screen is made

std::shared_ptr<const q4s::Weight> screen_of(const Linear& head, int64_t vocab, int64_t in) {
  auto w = std::make_shared<q4s::Weight>(q4s::empty_weight(vocab, in));
  for (int64_t r0 = 0; r0 < vocab; r0 += kSliceRows) {  // slices start on a tile
    const int64_t n = std::min(kSliceRows, vocab - r0);
    const at::Tensor rows = head.rows(at::arange(r0, r0 + n, at::kLong)).contiguous();
    const float* src = rows.data_ptr<float>();
    parallel_ranges((n + q4s::kTile - 1) / q4s::kTile, 1, [&](int64_t t0, int64_t t1) {
      const int64_t a = r0 + t0 * q4s::kTile, b = std::min(r0 + n, r0 + t1 * q4s::kTile);
      q4s::quantise_rows_into(*w, src + (a - r0) * in, in, a, b);
    });
  }
  return w;
}

}  // namespace

bool screen_pays(int64_t head_bytes, int64_t screen_bytes, int64_t product_bytes) {
  return product_bytes > 0 && 9 * (head_bytes - screen_bytes) >= product_bytes;
}

bool screen_pays(const Linear& head, int64_t product_bytes) {
  return head.int8() && screen_pays(head.bytes(), q4s::weight_bytes(head.out_features(), head.in_features()), product_bytes);
}

ScreenedHead::ScreenedHead(const Linear& head, int64_t candidates) : candidates_(candidates) {
  if (candidates < 1) throw std::invalid_argument("a screened head needs at least one candidate");
  if (!head.int8()) throw std::invalid_argument("a screened head needs the draft's head in int8 (--dtype int8: Q8_0, 4-bit or K-quant blocks)");
  candidates_ = std::min(candidates, head.out_features());
  screen_ = screen_of(head, head.out_features(), head.in_features());
}

int64_t ScreenedHead::bytes() const { return screen_ ? screen_->bytes() : 0; }

at::Tensor ScreenedHead::screen(const at::Tensor& x) const {
  const q4s::Weight& w = *screen_;
  check_rows(x, w.in, at::kFloat, "ScreenedHead::screen");
  const at::Tensor a = x.contiguous();
  const int64_t m = a.size(0);
  at::Tensor y = at::empty({m, w.out}, at::kFloat);
  thread_local q8::Rows buffer;  // reused from call to call (see Int8Weight::multiply)
  q8::Rows& rows = buffer;
  q8::resize_rows(rows, m, w.in);
  q8::quantise_activations(a.data_ptr<float>(), w.in, 0, m, rows);
  float* dst = y.data_ptr<float>();
  const q4s::Isa isa = q4s::best_isa();
  over_tiles(w.tiles, 2, [&](int64_t t0, int64_t t1) { q4s::multiply(w, rows, dst, w.out, t0, t1, isa); });
  return y;
}

at::Tensor ScreenedHead::operator()(const at::Tensor& h, const Linear& head) const {
  RECORD_FUNCTION("exspec::screened_head", std::vector<c10::IValue>());
  const at::Tensor x = h.reshape({-1, h.size(-1)}).contiguous();  // [N, in]
  at::Tensor logits = screen(x);                                  // [N, vocab]
  const int64_t n = logits.size(0), vocab = logits.size(1), k = candidates_;
  at::Tensor cols = at::empty({n, k}, at::kLong);
  for (int64_t r = 0; r < n; ++r) rowops::top_k(logits.data_ptr<float>() + r * vocab, vocab, k, cols.data_ptr<int64_t>() + r * k);
  logits.scatter_(1, cols, head.columns(x, cols));
  std::vector<int64_t> shape = h.sizes().vec();
  shape.back() = vocab;
  return logits.view(shape);
}

}  // namespace exspec
