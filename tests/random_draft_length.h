// A draft-length policy for tests: K drawn at random (seeded) in [0, k_max], with K = 0 often
// enough to make runs of plain target steps that leave the draft several tokens behind. Drives
// the engines through every K transition; the output must still be the oracle's.
#pragma once
#include <atomic>
#include <mutex>
#include <random>

#include "actors/scheduler/draft_length.h"

namespace exspec::test {

class RandomDraftLength : public DraftLengthPolicy {
 public:
  RandomDraftLength(uint64_t seed, int64_t k_max) : DraftLengthPolicy(settings(k_max)), rng_(seed), k_max_(k_max) {}
  DraftChoice choose(const std::vector<RowOutlook>&, int64_t, bool, int64_t) override {
    std::lock_guard<std::mutex> lock(mu_);
    DraftChoice c;
    c.k = std::uniform_real_distribution<double>(0, 1)(rng_) < 0.4
              ? 0
              : std::uniform_int_distribution<int64_t>(1, k_max_)(rng_);
    last_k_ = c.k;
    return c;
  }
  // Groups are formed as for the K just drawn: both of the batch former's rules get exercised.
  bool speculating() const override { return last_k_ > 0; }

 private:
  static DraftLengthSettings settings(int64_t k_max) {
    DraftLengthSettings s;
    s.k_max = k_max;
    return s;
  }
  std::mutex mu_;
  std::mt19937_64 rng_;
  int64_t k_max_;
  std::atomic<int64_t> last_k_{0};
};

}  // namespace exspec::test
