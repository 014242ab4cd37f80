// Σ a_i b_i in one fixed order: lane l sums the i ≡ l (mod 16) in order, then the lanes by a
// fixed tree (lane l += lane l + 8, then + 4, + 2, + 1). The kernels' clones (AVX-512, AVX2,
// plain; built with -ffp-contract=off) vectorise it alike and get the same bits, and one row's
// sum never sees another row.
#pragma once
#include <cstdint>
#include <cstring>

// The helpers pass vectors by value but are always inlined into the kernels' clones: no ABI to keep.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace exspec {

// The 16 lanes are four 4-float vectors (lanes 0-3, 4-7, 8-11, 12-15), so the tree's first two
// steps are sums of whole vectors and the rest halving shuffles: element for element the same
// multiplies and adds as scalar loops over `lane[16]` (which GCC left as a chain of scalar adds
// through the stack, most of a decode step's attention). 4 floats: every clone has the registers
// (GCC lowers wider vectors through the stack where the clone's registers are narrower).
namespace fixed_order {
typedef float V4 __attribute__((vector_size(16)));
typedef float V2 __attribute__((vector_size(8)));

inline __attribute__((always_inline)) V4 load4(const float* p) {
  V4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
// The 0 < n values left (at most 4 taken), zeros past them (a lane, never -0 as it starts at +0,
// stays as it was when 0 · 0 is added).
inline __attribute__((always_inline)) V4 load4_tail(const float* p, int64_t n) {
  V4 v = {};
  std::memcpy(&v, p, static_cast<size_t>(n < 4 ? n : 4) * sizeof(float));
  return v;
}
}  // namespace fixed_order

inline __attribute__((always_inline)) float fixed_order_dot(const float* a, const float* b, int64_t n) {
  using namespace fixed_order;
  V4 l[4] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int q = 0; q < 4; ++q) l[q] += load4(a + i + 4 * q) * load4(b + i + 4 * q);
  for (int q = 0; q < 4 && i + 4 * q < n; ++q)  // a lane past n adds nothing, as 0 · 0 would not change it
    l[q] += load4_tail(a + i + 4 * q, n - i - 4 * q) * load4_tail(b + i + 4 * q, n - i - 4 * q);
  const V4 s4 = (l[0] + l[2]) + (l[1] + l[3]);  // lane l + lane l + 8, then + lane l + 4
  const V2 s2 = __builtin_shufflevector(s4, s4, 0, 1) + __builtin_shufflevector(s4, s4, 2, 3);
  return s2[0] + s2[1];
}

}  // namespace exspec

#pragma GCC diagnostic pop
