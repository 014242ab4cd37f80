#include "model/attention.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "model/kernels/attention_kernel.h"
#include "model/kernels/kernel_threads.h"
#include "model/kv_store.h"

namespace exspec {
namespace {

// The most negative finite value: a fully masked row (a padding query) then softmaxes to a
// uniform, finite distribution instead of NaN, and masked keys still get exactly zero weight.
double lowest(at::ScalarType t) {
  switch (t) {
    case at::kDouble: return std::numeric_limits<double>::lowest();
    // The type's own lowest, exactly: a rounded literal below it overflowed bfloat16's check.
    case at::kHalf: return static_cast<float>(std::numeric_limits<c10::Half>::lowest());
    case at::kBFloat16: return static_cast<float>(std::numeric_limits<c10::BFloat16>::lowest());
    default: return std::numeric_limits<float>::lowest();
  }
}

// A tensor's pointer and strides as the kernel reads it: unit stride along D.
attn::View view_of(const at::Tensor& t) { return {t.data_ptr(), t.stride(0), t.stride(1), t.stride(2)}; }

at::Tensor unit_d(const at::Tensor& t) { return t.stride(3) == 1 ? t : t.contiguous(); }

// The fixed-order kernel over every query, split over the calling thread's team (each query
// whole on one thread). The output is [B, T, H, D] underneath, as the caller reshapes it to rows.
at::Tensor cpu_attention(const at::Tensor& q0, const at::Tensor& k0, const at::Tensor& v0, const at::Tensor& blocked,
                         double scale, double softcap) {
  const at::Tensor q = unit_d(q0), k = unit_d(k0), v = unit_d(v0);
  attn::Shape s;
  s.B = q.size(0), s.H = q.size(1), s.T = q.size(2), s.D = q.size(3), s.Hkv = k.size(1), s.S = k.size(2);
  s.bf16 = q.scalar_type() == at::kBFloat16;
  s.scale = static_cast<float>(scale);
  s.softcap = static_cast<float>(softcap);
  at::Tensor out = at::empty({s.B, s.T, s.H, s.D}, q.options()).transpose(1, 2);  // [B, H, T, D]
  at::Tensor mask = blocked.defined() ? blocked.to(at::kBool).contiguous() : at::Tensor();
  const bool* open = mask.defined() ? mask.data_ptr<bool>() : nullptr;
  const attn::View qv = view_of(q), kv = view_of(k), vv = view_of(v), ov = view_of(out);
  parallel_ranges(s.B * s.Hkv * s.T, 1, [&](int64_t b, int64_t e) { attn::attention(s, qv, kv, vv, open, ov, b, e); });
  return out;
}

}  // namespace

at::Tensor attention_in_store(KVStore& store, const SlotForward& f, int64_t layer, const at::Tensor& qk,
                              const at::Tensor& v, int64_t H, const at::Tensor& blocked, double scale, double softcap) {
  const at::ScalarType t = qk.scalar_type();
  if (!qk.device().is_cpu() || (t != at::kFloat && t != at::kBFloat16) || v.scalar_type() != t || qk.dim() != 4 ||
      v.dim() != 4 || qk.stride(3) != 1 || v.stride(3) != 1 || qk.stride(2) != qk.size(3) || v.stride(2) != v.size(3) ||
      (blocked.defined() && (blocked.scalar_type() != at::kBool || !blocked.is_contiguous() || blocked.size(2) != f.window)))
    return {};
  attn::Shape s;
  s.B = qk.size(0), s.T = qk.size(1), s.H = H, s.Hkv = v.size(2), s.S = f.window, s.D = qk.size(3);
  s.bf16 = t == at::kBFloat16, s.scale = static_cast<float>(scale), s.softcap = static_cast<float>(softcap);
  const auto* k = static_cast<const char*>(qk.data_ptr()) + H * s.D * qk.element_size();
  KVStore::Read r;
  if (!store.write_read_direct(layer, f, t, {k, qk.stride(0), qk.stride(1)}, {v.data_ptr(), v.stride(0), v.stride(1)}, r))
    return {};
  at::Tensor out = at::empty({s.B * s.T, H * s.D}, qk.options());
  const attn::View qv{qk.data_ptr(), qk.stride(0), qk.stride(2), qk.stride(1)};  // (b, h, t): heads D apart
  const attn::View kv{const_cast<void*>(r.k), r.sb, r.sh, r.sp}, vv{const_cast<void*>(r.v), r.sb, r.sh, r.sp};
  const attn::View ov{out.data_ptr(), s.T * H * s.D, s.D, H * s.D};
  const bool* open = blocked.defined() ? blocked.data_ptr<bool>() : nullptr;
  parallel_ranges(s.B * s.Hkv * s.T, 1, [&](int64_t b, int64_t e) { attn::attention(s, qv, kv, vv, open, ov, b, e); });
  return out;
}

at::Tensor attention_blocked(const at::Tensor& mask, int64_t cached, int64_t t) {
  // A decode step without padding blocks nothing: say so, and every layer skips its mask. Only
  // a mask already on the host is inspected, so a device never waits for this.
  if (t == 1 && mask.device().is_cpu() && mask.all().item<bool>()) return {};
  const int64_t s = mask.size(1);
  auto opts = at::TensorOptions().dtype(at::kLong).device(mask.device());
  at::Tensor key_pos = at::arange(s, opts).view({1, 1, s});
  at::Tensor query_pos = (at::arange(t, opts) + cached).view({1, t, 1});
  return mask.to(at::kBool).unsqueeze(1).logical_and(key_pos <= query_pos).logical_not();  // [B, T, S]
}

const at::Tensor& AttentionMasks::of(AttentionWindow w) const {
  switch (w) {
    case AttentionWindow::Full: return full;
    case AttentionWindow::Sliding:
      if (window <= 0) throw std::logic_error("AttentionMasks: a sliding layer in a model without a window");
      return sliding;
  }
  throw std::logic_error("AttentionMasks: an AttentionWindow without its mask");
}

AttentionMasks attention_masks(const at::Tensor& full, const at::Tensor& key_pos, const at::Tensor& query_pos,
                               int64_t window) {
  AttentionMasks m{full, full, window};
  // Keys no further back than the window from every query: the full mask already says it all.
  if (window <= 0 || key_pos.size(-1) <= window) return m;
  const int64_t B = query_pos.size(0), T = query_pos.size(1), S = key_pos.size(-1);
  at::Tensor passed = (query_pos.view({B, T, 1}) - key_pos.view({key_pos.size(0), 1, S})) >= window;  // [B, T, S]
  m.sliding = full.defined() ? full.logical_or(passed) : passed;
  return m;
}

at::Tensor key_positions(const at::Tensor& mask) { return mask.to(at::kLong).cumsum(1) - 1; }

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& blocked,
                     double scale, bool onednn, double softcap) {
  const at::ScalarType t = q.scalar_type();
  if (onednn && q.device().is_cpu() && (t == at::kFloat || t == at::kBFloat16) && k.scalar_type() == t &&
      v.scalar_type() == t)
    return cpu_attention(q, k, v, blocked, scale, softcap);
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3);
  const int64_t Hkv = k.size(1), S = k.size(2), G = H / Hkv;
  // Group the query heads that share a kv head instead of repeating k and v (no copy of the cache).
  at::Tensor qg = q.reshape({B, Hkv, G * T, D});
  at::Tensor scores = at::matmul(qg, k.transpose(-1, -2)).view({B, Hkv, G, T, S});
  // In place: the scores are this call's own, and a long context makes each pass over them cost.
  scores.mul_(scale);
  if (softcap > 0) scores.div_(softcap).tanh_().mul_(softcap);  // Gemma 2: before the mask
  if (blocked.defined()) scores.masked_fill_(blocked.view({B, 1, 1, T, S}), lowest(scores.scalar_type()));
  const bool low = q.scalar_type() == at::kHalf || q.scalar_type() == at::kBFloat16;
  at::Tensor probs = low ? at::softmax(scores, -1, at::kFloat).to(q.scalar_type()) : at::softmax(scores, -1);
  at::Tensor out = at::matmul(probs.view({B, Hkv, G * T, S}), v);  // [B, Hkv, G*T, D]
  return out.view({B, H, T, D});
}

}  // namespace exspec
