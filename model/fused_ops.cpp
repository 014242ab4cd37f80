#include "model/fused_ops.h"

#include <ATen/ATen.h>

#include <cmath>
#include <type_traits>

#include "model/kernels/row_ops.h"
#include "model/kernels/kernel_threads.h"

namespace exspec {
namespace {

bool applies(const at::Tensor& t) {
  return t.device().is_cpu() && (t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16);
}

rowops::Type type_of(const at::Tensor& t) { return t.scalar_type() == at::kBFloat16 ? rowops::Type::BF16 : rowops::Type::F32; }

// Rows over the calling thread's team, a row whole on one thread; a few rows stay on this one.
void over_rows(int64_t n, const std::function<void(int64_t, int64_t)>& f) { parallel_ranges(n, 16, f); }

// x = cap * tanh(x / cap) in T, each step rounded to T; -inf kept.
template <class T>
void cap_all(T* x, int64_t n, double cap) {
  using M = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const M c = static_cast<M>(cap);
  for (int64_t i = 0; i < n; ++i) {
    const M v = static_cast<M>(x[i]);
    if (std::isinf(v) && v < 0) continue;
    const T scaled = static_cast<T>(v / c);
    const T t = static_cast<T>(std::tanh(static_cast<M>(scaled)));
    x[i] = static_cast<T>(static_cast<M>(t) * c);
  }
}

}  // namespace

at::Tensor softcap_logits(const at::Tensor& x, double cap) {
  if (!x.device().is_cpu()) return at::where(x.isneginf(), x, x.div(cap).tanh().mul(cap));
  at::Tensor y = x.contiguous().clone();
  const int64_t n = y.numel();
  switch (y.scalar_type()) {
    case at::kDouble: cap_all(y.data_ptr<double>(), n, cap); break;
    case at::kFloat: cap_all(y.data_ptr<float>(), n, cap); break;
    case at::kBFloat16: cap_all(y.data_ptr<at::BFloat16>(), n, cap); break;
    case at::kHalf: cap_all(y.data_ptr<at::Half>(), n, cap); break;
    default: throw std::invalid_argument("softcap_logits: logits of an unexpected dtype");
  }
  return y;
}

bool fused_add_(const at::Tensor& h, const at::Tensor& y) {
  if (!h.device().is_cpu() || h.scalar_type() != at::kFloat || y.scalar_type() != at::kFloat || !y.device().is_cpu() ||
      !h.is_contiguous() || !y.is_contiguous() || h.numel() != y.numel())
    return false;
  float* out = h.data_ptr<float>();
  const float* in = y.data_ptr<float>();
  for (int64_t i = 0, n = h.numel(); i < n; ++i) out[i] += in[i];
  return true;
}

at::Tensor fused_rms_norm(const at::Tensor& x0, const at::Tensor& w0, double eps) {
  if (!applies(x0) || w0.scalar_type() != x0.scalar_type()) return {};
  // w: one weight for every row [H], or one for each head over x's last two dims [heads, H]
  // (Qwen3's and Gemma 3's q and k norms side by side).
  const bool per_head = w0.dim() == 2 && x0.dim() >= 2 && w0.size(0) == x0.size(-2) && w0.size(1) == x0.size(-1);
  if (w0.dim() != 1 && !per_head) return {};
  const at::Tensor x = x0.contiguous(), w = w0.contiguous();
  const int64_t H = x.size(-1), n = x.numel() / H, heads = per_head ? w.size(0) : 1;
  at::Tensor y = at::empty_like(x);
  const auto* wp = static_cast<const char*>(w.data_ptr());
  over_rows(n, [&](int64_t r0, int64_t r1) {
    if (heads == 1) return rowops::rms_norm(type_of(x), x.data_ptr(), H, wp, static_cast<float>(eps), y.data_ptr(), H, H, r0, r1);
    for (int64_t r = r0; r < r1; ++r)
      rowops::rms_norm(type_of(x), x.data_ptr(), H, wp + r % heads * H * w.element_size(), static_cast<float>(eps),
                       y.data_ptr(), H, H, r, r + 1);
  });
  return y;
}

at::Tensor fused_gated_mul(rowops::Gate gate, const at::Tensor& gu) {
  if (!applies(gu) || gu.dim() != 2 || gu.stride(1) != 1) return {};
  const int64_t n = gu.size(0), I = gu.size(1) / 2;
  at::Tensor out = at::empty({n, I}, gu.options());
  over_rows(n, [&](int64_t r0, int64_t r1) {
    rowops::gated_mul(type_of(gu), gate, gu.data_ptr(), gu.stride(0), out.data_ptr(), I, I, r0, r1);
  });
  return out;
}

at::Tensor fused_rope(const at::Tensor& x, const at::Tensor& cos0, const at::Tensor& sin0) {
  if (!applies(x) || x.dim() != 4 || cos0.scalar_type() != x.scalar_type() || sin0.scalar_type() != x.scalar_type() ||
      cos0.size(-1) != x.size(3))
    return {};
  const int64_t n = x.size(0) * x.size(1), heads = x.size(2), D = x.size(3);
  const at::Tensor rows = x.reshape({n, heads, D});  // a view for the decoder's rows of q and k
  const at::Tensor cos = cos0.contiguous(), sin = sin0.contiguous();
  if (rows.stride(2) != 1 || rows.stride(1) != D || cos.numel() != n * D || sin.numel() != n * D) return {};
  at::Tensor y = at::empty(x.sizes(), x.options());
  over_rows(n, [&](int64_t r0, int64_t r1) {
    rowops::rope(type_of(x), rows.data_ptr(), rows.stride(0), cos.data_ptr(), sin.data_ptr(), D, y.data_ptr(), heads, D,
                 r0, r1);
  });
  return y;
}

}  // namespace exspec
