// The machine's memory read bandwidth, measured: the yardstick for a weight-bound forward pass
// (its floor is the bytes of weights it must read / this bandwidth). On a shared machine the
// bandwidth moves by a third between minutes, so measure it beside each timing, not once.
#pragma once
#include <cstdint>
#include <memory>

namespace exspec {

struct Bandwidth {
  double best_gbs = 0;    // best pass, GB/s (1e9 bytes)
  double median_gbs = 0;  // median pass
};

// The sum of n words, read once with independent accumulators: a plain read at the pace the
// memory gives (the probe's loop; kernel_rows reads weights with it too).
uint64_t sum_slice(const uint64_t* p, int64_t n);

// A buffer of `bytes` (far larger than the last-level cache), touched once by the threads that
// later read it; each measure() reads it with those `threads` threads, each summing its own
// slice with independent accumulators.
class BandwidthProbe {
 public:
  explicit BandwidthProbe(int threads, int64_t bytes = int64_t(1) << 30);
  Bandwidth measure(int passes = 5) const;

 private:
  int threads_;
  int64_t words_per_thread_;
  std::unique_ptr<uint64_t[]> buf_;
};

}  // namespace exspec
