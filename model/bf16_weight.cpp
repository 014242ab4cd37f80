#include "model/bf16_weight.h"

#include <ATen/ATen.h>

#include "model/kernels/bf16_kernel.h"
#include "model/kernels/kernel_threads.h"
#include "model/weight_tiles.h"

namespace exspec {

struct Bf16Weight::Impl {
  bf16::Weight w;
};

Bf16Weight::Bf16Weight(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Bf16Weight::~Bf16Weight() = default;
int64_t Bf16Weight::bytes() const { return impl_->w.bytes(); }

at::Tensor Bf16Weight::rows(const at::Tensor& ids) const {
  const bf16::Weight& w = impl_->w;
  at::Tensor idx = ids.to(at::kCPU, at::kLong).contiguous().view({-1});
  at::Tensor y = at::empty({idx.size(0), w.in}, at::kBFloat16);
  const int64_t* id = idx.data_ptr<int64_t>();
  auto* dst = reinterpret_cast<uint16_t*>(y.data_ptr<at::BFloat16>());
  for (int64_t i = 0; i < idx.size(0); ++i) {
    TORCH_CHECK(id[i] >= 0 && id[i] < w.out, "Bf16Weight::rows: id ", id[i], " out of range [0, ", w.out, ")");
    bf16::unpack_row(w, id[i], dst + i * w.in);
  }
  return y;
}

std::shared_ptr<const Bf16Weight> Bf16Weight::pack(const at::Tensor& weight) {
  if (!weight.device().is_cpu() || weight.dim() != 2 || weight.scalar_type() != at::kBFloat16) return nullptr;
  auto impl = std::make_unique<Impl>();
  const int64_t out = weight.size(0), in = weight.size(1);
  impl->w = bf16::empty_weight(out, in);
  at::Tensor w = weight.contiguous();
  const auto* src = reinterpret_cast<const uint16_t*>(w.data_ptr<at::BFloat16>());
  parallel_ranges(impl->w.tiles, 1, [&](int64_t t0, int64_t t1) {
    bf16::pack_rows_into(impl->w, src + t0 * bf16::kTile * in, in, t0 * bf16::kTile, std::min(out, t1 * bf16::kTile));
  });
  return std::shared_ptr<const Bf16Weight>(new Bf16Weight(std::move(impl)));
}

at::Tensor Bf16Weight::multiply(const at::Tensor& x) const {
  const bf16::Weight& w = impl_->w;
  check_rows(x, w.in, at::kBFloat16, "Bf16Weight::multiply");
  const int64_t m = x.size(0);
  at::Tensor a = x.contiguous();
  at::Tensor y = at::empty({m, w.out}, a.options());
  if (m == 0) return y;
  const auto* src = reinterpret_cast<const uint16_t*>(a.data_ptr<at::BFloat16>());
  auto* dst = reinterpret_cast<uint16_t*>(y.data_ptr<at::BFloat16>());
  const bf16::Isa isa = bf16::best_isa();
  over_tiles(w.tiles, bf16::kGroup, [&](int64_t t0, int64_t t1) { bf16::multiply(w, src, m, w.in, dst, w.out, t0, t1, isa); });
  return y;
}

}  // namespace exspec
