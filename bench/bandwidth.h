// The machine's memory read bandwidth, measured: the yardstick for a weight-bound forward pass
// (its floor is the bytes of weights it must read / this bandwidth).
#pragma once
#include <cstdint>

namespace exspec {

struct Bandwidth {
  double best_gbs = 0;    // best pass, GB/s (1e9 bytes)
  double median_gbs = 0;  // median pass
};

// Reads a buffer of `bytes` (far larger than the last-level cache) with `threads` threads, each
// summing its own slice with independent accumulators; `passes` timed passes after one warm pass.
Bandwidth measure_read_bandwidth(int threads, int64_t bytes = int64_t(1) << 30, int passes = 7);

}  // namespace exspec
