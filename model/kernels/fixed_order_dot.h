// Σ a_i b_i in one fixed order: lane l sums the i ≡ l (mod 16) in order, then the lanes by a
// fixed tree. The kernels' clones (AVX-512, AVX2, plain; built with -ffp-contract=off) vectorise
// it alike and get the same bits, and one row's sum never sees another row.
#pragma once
#include <cstdint>

namespace exspec {

inline __attribute__((always_inline)) float fixed_order_dot(const float* a, const float* b, int64_t n) {
  constexpr int64_t kLanes = 16;
  float lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += a[i + l] * b[i + l];
  for (int64_t l = 0; i + l < n; ++l) lane[l] += a[i + l] * b[i + l];
  for (int64_t w = kLanes / 2; w >= 1; w /= 2)
    for (int64_t l = 0; l < w; ++l) lane[l] += lane[l + w];
  return lane[0];
}

}  // namespace exspec
