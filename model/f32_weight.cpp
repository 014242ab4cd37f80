#include "model/f32_weight.h"

#include <ATen/ATen.h>

#include "model/kernels/f32_kernel.h"
#include "model/kernels/kernel_threads.h"
#include "model/weight_tiles.h"

namespace exspec {

struct F32Weight::Impl {
  f32::Weight w;
};

F32Weight::F32Weight(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
F32Weight::~F32Weight() = default;
int64_t F32Weight::bytes() const { return impl_->w.bytes(); }

at::Tensor F32Weight::rows(const at::Tensor& ids) const {
  const f32::Weight& w = impl_->w;
  at::Tensor idx = ids.to(at::kCPU, at::kLong).contiguous().view({-1});
  at::Tensor y = at::empty({idx.size(0), w.in}, at::kFloat);
  const int64_t* id = idx.data_ptr<int64_t>();
  float* dst = y.data_ptr<float>();
  for (int64_t i = 0; i < idx.size(0); ++i) {
    TORCH_CHECK(id[i] >= 0 && id[i] < w.out, "F32Weight::rows: id ", id[i], " out of range [0, ", w.out, ")");
    f32::unpack_row(w, id[i], dst + i * w.in);
  }
  return y;
}

std::shared_ptr<const F32Weight> F32Weight::pack(const at::Tensor& weight) {
  if (!weight.device().is_cpu() || weight.dim() != 2 || weight.scalar_type() != at::kFloat) return nullptr;
  auto impl = std::make_unique<Impl>();
  const int64_t out = weight.size(0), in = weight.size(1);
  impl->w = f32::empty_weight(out, in);
  at::Tensor w = weight.contiguous();
  const float* src = w.data_ptr<float>();
  parallel_ranges(impl->w.tiles, 1, [&](int64_t t0, int64_t t1) {
    f32::pack_rows_into(impl->w, src + t0 * f32::kTile * in, in, t0 * f32::kTile, std::min(out, t1 * f32::kTile));
  });
  return std::shared_ptr<const F32Weight>(new F32Weight(std::move(impl)));
}

at::Tensor F32Weight::multiply(const at::Tensor& x) const {
  const f32::Weight& w = impl_->w;
  check_rows(x, w.in, at::kFloat, "F32Weight::multiply");
  const int64_t m = x.size(0);
  at::Tensor a = x.contiguous();
  at::Tensor y = at::empty({m, w.out}, a.options());
  if (m == 0) return y;
  const float* src = a.data_ptr<float>();
  float* dst = y.data_ptr<float>();
  const f32::Isa isa = f32::best_isa();
  over_tiles(w.tiles, f32::kGroup, [&](int64_t t0, int64_t t1) { f32::multiply(w, src, m, w.in, dst, w.out, t0, t1, isa); });
  return y;
}

}  // namespace exspec
