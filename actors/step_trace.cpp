#include "actors/step_trace.h"

#include <cstdio>
#include <cstdlib>

namespace exspec {

bool trace_enabled() {
  static const bool on = std::getenv("EXSPEC_TRACE") != nullptr;
  return on;
}

void trace_choice(const DraftLengthPolicy& policy, const BatchOutlook& o, bool reused, int64_t chosen) {
  double alpha = 0;
  for (const auto& r : o.rows) alpha += r.acceptance;
  std::fprintf(stderr, "choose B %zu S %lld L %lld reused %d mean_alpha %.2f global %.2f serial %.2f | expected tokens / predicted ms:",
               o.rows.size(), static_cast<long long>(o.context), static_cast<long long>(o.lag), static_cast<int>(reused),
               alpha / static_cast<double>(o.rows.size()), policy.acceptance(), policy.serial_share());
  for (int64_t k = 0; k <= policy.settings().k_max; ++k) {
    const DraftChoice c = policy.evaluate(o.rows, o.context, reused, o.lag, k, 0.0);
    std::fprintf(stderr, " K%lld %.1f/%.1f", static_cast<long long>(k), c.expected_tokens, 1e3 * c.predicted_s);
  }
  std::fprintf(stderr, " -> %lld\n", static_cast<long long>(chosen));
}

void trace_step(const DraftLengthPolicy& policy, const StepShape& s, const StepTimes& t, bool grouped) {
  const StepCostModel& c = policy.costs();
  std::fprintf(stderr, "step B %lld K %lld S %lld L %lld | ms predicted/measured: draft %.1f/%.1f verify %.1f/%.1f "
               "align %.1f/%.1f | grouped %d reused %d\n",
               static_cast<long long>(s.rows), static_cast<long long>(s.k), static_cast<long long>(s.context),
               static_cast<long long>(s.lag), 1e3 * c.predict_draft(s), 1e3 * t.draft_s, 1e3 * c.predict_verify(s),
               1e3 * t.verify_s, 1e3 * c.predict_align(s), 1e3 * t.align_s, static_cast<int>(grouped),
               static_cast<int>(s.reused));
}

}  // namespace exspec
