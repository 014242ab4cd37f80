// exp(x) in float32 within 2 ulp (Cephes' expf), written so that a loop over it vectorises and
// every instruction-set clone computes the same bits (include it from TUs built with
// -ffp-contract=off: model/kernels/row_ops.cpp, model/kernels/attention_kernel.cpp,
// model/kernels/attention_lanes.cpp). Torch-free.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace exspec {

// F: float (I: int32_t), or a GCC vector of float lanes (I: the vector of as many int32 lanes),
// for which each lane is computed as the float one is: the same operations in the same order.
template <class F = float, class I = int32_t>
inline __attribute__((always_inline)) F exp_f32(F x) {
  // Cephes expf: x = n ln2 + r, |r| <= ln2 / 2; e^r by a degree-5 polynomial; 2^n by the exponent.
  // F{} + c is c itself, in every lane.
  x = x < -87.0f ? F{} + -87.0f : (x > 88.0f ? F{} + 88.0f : x);
  const F t = x * 1.44269504088896341f;
  const F n = (t + 12582912.0f) - 12582912.0f;  // round to nearest: 1.5 * 2^23
  F r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const F z = r * r;
  F p = F{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  I k;  // n as an integer (it is one), then 2^n's bits: (n + 127) << 23, below 2^31
  if constexpr (std::is_same_v<F, float>) k = static_cast<int32_t>(n);
  else k = __builtin_convertvector(n, I);
  const I bits = (k + 127) << 23;
  F scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

}  // namespace exspec
