// The loop over a product's panels, shared by the CPU kernels (torch-free). Rows go in chunks
// whose activations stay in a core's L2; within a chunk, each group of up to TN output tiles
// visits every group of up to R rows, so that a panel's weights come from memory once a chunk
// and from L1 for every row group after the first. The order changes which rows and tiles share
// registers, never the arithmetic of one output.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace exspec {

// Rows of `row_bytes` each that fit the chunk's share of L2.
inline int64_t chunk_rows(int64_t row_bytes) {
  constexpr int64_t kL2Share = 256 << 10;
  return std::max<int64_t>(4, kL2Share / std::max<int64_t>(1, row_bytes) / 4 * 4);
}

// panel(r, rn, t, tn): rows [r, r + rn), tiles [t, t + tn), with rn <= R and tn <= TN.
template <class Panel>
inline void for_panels(int64_t m, int64_t t0, int64_t t1, int64_t chunk, int R, int TN, const Panel& panel) {
  for (int64_t rc = 0; rc < m; rc += chunk) {
    const int64_t re = std::min(m, rc + chunk);
    for (int64_t t = t0; t < t1; t += TN) {
      const int tn = static_cast<int>(std::min<int64_t>(TN, t1 - t));
      for (int64_t r = rc; r < re; r += R) panel(r, static_cast<int>(std::min<int64_t>(R, re - r)), t, tn);
    }
  }
}

// f(std::integral_constant<int, n>) for a runtime n in [1, N]: a panel's size as a template
// argument, so that its accumulators are registers.
template <int N, class F>
inline void with_constant(int n, const F& f) {
  if constexpr (N > 1) {
    if (n == N) return f(std::integral_constant<int, N>{});
    with_constant<N - 1>(n, f);
  } else {
    f(std::integral_constant<int, 1>{});
  }
}

// for_panels with the panel's size as constants: panel(rn, tn, r, t) with rn and tn
// std::integral_constant<int, ...> of at most R and TN.
template <int R, int TN, class Panel>
inline void for_fixed_panels(int64_t m, int64_t t0, int64_t t1, int64_t chunk, const Panel& panel) {
  for_panels(m, t0, t1, chunk, R, TN, [&](int64_t r, int rn, int64_t t, int tn) {
    with_constant<R>(rn, [&](auto rc) { with_constant<TN>(tn, [&](auto tc) { panel(rc, tc, r, t); }); });
  });
}

}  // namespace exspec
