// exp(x) in float32 within 2 ulp (Cephes' expf), written so that a loop over it vectorises and
// every instruction-set clone computes the same bits (include it from TUs built with
// -ffp-contract=off: model/kernels/row_ops.cpp, model/kernels/attention_kernel.cpp). Torch-free.
#pragma once
#include <cstdint>
#include <cstring>

namespace exspec {

inline __attribute__((always_inline)) float exp_f32(float x) {
  // Cephes expf: x = n ln2 + r, |r| <= ln2 / 2; e^r by a degree-5 polynomial; 2^n by the exponent.
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  const float t = x * 1.44269504088896341f;
  const float n = (t + 12582912.0f) - 12582912.0f;  // round to nearest: 1.5 * 2^23
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  return p * scale;
}

}  // namespace exspec
