// Running estimate of how often the target accepts a sequence's drafts: the per-token acceptance
// probability alpha of the paper's analysis (each draft accepted with probability alpha given
// that the ones before it were). Recent steps count more, since a sequence's predictability
// changes with its content.
#pragma once
#include <algorithm>
#include <cstdint>

namespace exspec {

// Acceptance falls with temperature (a draft d is accepted with probability p(d)): estimates
// and metrics are kept per band of it. Bands: 0 (greedy), (0, 0.5], (0.5, 1], above 1.
constexpr int kTemperatureBands = 4;
inline int temperature_band(double t) { return t <= 0 ? 0 : t <= 0.5 ? 1 : t <= 1.0 ? 2 : 3; }
inline const char* temperature_band_name(int b) {
  static const char* names[kTemperatureBands] = {"0", "0-0.5", "0.5-1", "1-2"};
  return names[b];
}

struct AcceptanceEstimate {
  double accepted = 0, trials = 0;

  // A step that proposed k drafts of which the first `a` were accepted: a successes, and one
  // failure unless all k were accepted.
  void observe(int64_t k, int64_t a, double decay) {
    if (k <= 0) return;
    accepted = accepted * decay + static_cast<double>(a);
    trials = trials * decay + static_cast<double>(std::min(a + 1, k));
  }
  // Shrunk towards `prior` (the engine-wide rate) while there is little evidence of our own.
  double rate(double prior, double prior_trials) const {
    return (accepted + prior * prior_trials) / (trials + prior_trials);
  }
};

}  // namespace exspec
