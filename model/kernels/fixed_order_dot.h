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

// The lanes are one 16-float vector and the tree is written as halving shuffles: element for
// element the same multiplies and adds as scalar loops over `lane[16]` (which GCC left as a chain
// of scalar adds through the stack, most of a decode step's attention).
namespace fixed_order {
typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));
typedef float V4 __attribute__((vector_size(16)));
typedef float V2 __attribute__((vector_size(8)));

// The tree over the 16 lanes.
inline __attribute__((always_inline)) float tree(V16 lane) {
  const V8 s8 = __builtin_shufflevector(lane, lane, 0, 1, 2, 3, 4, 5, 6, 7) +
                __builtin_shufflevector(lane, lane, 8, 9, 10, 11, 12, 13, 14, 15);
  const V4 s4 = __builtin_shufflevector(s8, s8, 0, 1, 2, 3) + __builtin_shufflevector(s8, s8, 4, 5, 6, 7);
  const V2 s2 = __builtin_shufflevector(s4, s4, 0, 1) + __builtin_shufflevector(s4, s4, 2, 3);
  return s2[0] + s2[1];
}

// 16 values from p, or the n < 16 left with zeros past them (a lane, never -0 as it starts at
// +0, stays as it was when 0 · 0 is added).
inline __attribute__((always_inline)) V16 load(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline __attribute__((always_inline)) V16 load_tail(const float* p, int64_t n) {
  V16 v = {};
  std::memcpy(&v, p, static_cast<size_t>(n) * sizeof(float));
  return v;
}
}  // namespace fixed_order

inline __attribute__((always_inline)) float fixed_order_dot(const float* a, const float* b, int64_t n) {
  using namespace fixed_order;
  V16 lane = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) lane += load(a + i) * load(b + i);
  if (i < n) lane += load_tail(a + i, n - i) * load_tail(b + i, n - i);
  return tree(lane);
}

}  // namespace exspec

#pragma GCC diagnostic pop
