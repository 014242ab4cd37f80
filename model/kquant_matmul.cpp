#include "model/kquant_matmul.h"

#include <ATen/ATen.h>

#include "model/kernels/kernel_threads.h"
#include "model/kernels/kquant_kernel.h"

namespace exspec {

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
  const int64_t width = weight.size(2), in = (width - 1) / kq::kQ6_KBytes * kq::kSuper;
  TORCH_CHECK(kq::tagged_width(in) == width, "KQuantWeight: tagged rows of ", width, " bytes");
  const at::Tensor b = weight.contiguous();
  auto impl = std::make_unique<Impl>();
  impl->w = kq::from_tagged(b.data_ptr<uint8_t>(), weight.size(0), in);
  return std::shared_ptr<const KQuantWeight>(new KQuantWeight(std::move(impl)));
}

at::Tensor KQuantWeight::multiply(const at::Tensor& x) const {
  const kq::Weight& w = impl_->w;
  TORCH_CHECK(x.dim() == 2 && x.size(1) == w.in && x.scalar_type() == at::kFloat && x.device().is_cpu(),
              "KQuantWeight::multiply: expected a CPU [M, ", w.in, "] float32 input");
  const int64_t m = x.size(0);
  at::Tensor a = x.contiguous();
  at::Tensor y = at::empty({m, w.out}, a.options());
  if (m == 0) return y;
  thread_local q8::Rows buffer;  // reused from call to call (see Int8Weight::multiply)
  q8::Rows& rows = buffer;
  q8::resize_rows(rows, m, w.in);
  const float* src = a.data_ptr<float>();
  parallel_ranges(m, 16, [&](int64_t r0, int64_t r1) { q8::quantise_activations(src, w.in, r0, r1, rows); });
  float* dst = y.data_ptr<float>();
  const kq::Isa isa = kq::best_isa();
  parallel_ranges(w.out, 16, [&](int64_t c0, int64_t c1) { kq::multiply(w, rows, dst, w.out, c0, c1, isa); });
  return y;
}

at::Tensor KQuantWeight::rows(const at::Tensor& ids) const {
  const kq::Weight& w = impl_->w;
  at::Tensor idx = ids.to(at::kCPU, at::kLong).contiguous().view({-1});
  at::Tensor y = at::empty({idx.size(0), w.in}, at::kFloat);
  const int64_t* id = idx.data_ptr<int64_t>();
  for (int64_t i = 0; i < idx.size(0); ++i) {
    TORCH_CHECK(id[i] >= 0 && id[i] < w.out, "KQuantWeight::rows: id ", id[i], " out of range [0, ", w.out, ")");
    kq::dequantise_row(w, id[i], y.data_ptr<float>() + i * w.in);
  }
  return y;
}

int64_t KQuantWeight::out_features() const { return impl_->w.out; }
int64_t KQuantWeight::in_features() const { return impl_->w.in; }
int64_t KQuantWeight::bytes() const { return impl_->w.bytes(); }

}  // namespace exspec
