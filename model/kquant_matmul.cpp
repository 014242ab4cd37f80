#include "model/kquant_matmul.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "model/int8_matmul.h"
#include "model/kernels/kquant_kernel.h"

namespace exspec {
namespace {
constexpr int64_t kUnit = 16;  // output columns a unit of the product: the least a thread takes
}  // namespace

struct KQuantWeight::Impl {
  kq::Weight w;
};

KQuantWeight::KQuantWeight(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KQuantWeight::~KQuantWeight() = default;

bool KQuantWeight::is_tagged(const at::Tensor& w) {
  return w.device().is_cpu() && w.dim() == 3 && w.size(1) == 1 && w.scalar_type() == at::kByte;
}

std::shared_ptr<const KQuantWeight> KQuantWeight::from_tagged(const at::Tensor& weight) {
  if (!is_tagged(weight)) return nullptr;
  const int64_t width = weight.size(2), in = (width - 1) / kq::kMaxBlockBytes * kq::kSuper;
  TORCH_CHECK(kq::tagged_width(in) == width, "KQuantWeight: tagged rows of ", width, " bytes");
  const at::Tensor b = weight.contiguous();
  auto impl = std::make_unique<Impl>();
  impl->w = kq::from_tagged(b.data_ptr<uint8_t>(), weight.size(0), in);
  return std::shared_ptr<const KQuantWeight>(new KQuantWeight(std::move(impl)));
}

at::Tensor KQuantWeight::rows(const at::Tensor& ids) const {
  const kq::Weight& w = impl_->w;
  return dequantised_rows(ids, w.out, w.in, "KQuantWeight::rows", [&](int64_t r, float* dst) { kq::dequantise_row(w, r, dst); });
}

at::Tensor KQuantWeight::columns(const at::Tensor& x, const at::Tensor& cols) const {
  static_assert(kUnit == q8::kTile, "int8_columns asks for q8::kTile columns at a time");
  const kq::Weight& w = impl_->w;
  const kq::Isa isa = kq::best_isa();
  return int8_columns(x, cols, w.in, w.out, "KQuantWeight::columns", [&](const q8::Rows& one, float* line, int64_t t) {
    kq::multiply(w, one, line, w.out, t * kUnit, std::min(w.out, (t + 1) * kUnit), isa);
  });
}

int64_t KQuantWeight::units() const { return (impl_->w.out + kUnit - 1) / kUnit; }
void KQuantWeight::multiply_units(const q8::Rows& x, float* y, int64_t ldy, int64_t u0, int64_t u1) const {
  const kq::Weight& w = impl_->w;
  kq::multiply(w, x, y, ldy, u0 * kUnit, std::min(w.out, u1 * kUnit), kq::best_isa());
}
int64_t KQuantWeight::out_features() const { return impl_->w.out; }
int64_t KQuantWeight::in_features() const { return impl_->w.in; }
int64_t KQuantWeight::bytes() const { return impl_->w.bytes(); }

}  // namespace exspec
