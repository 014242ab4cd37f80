#include "actors/scheduler/step_trace.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace exspec {
namespace {
std::chrono::steady_clock::time_point& started() {
  static std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  return t;
}
double since_ms() { return 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - started()).count(); }
}  // namespace

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

void trace_step(const DraftLengthPolicy* policy, const StepShape& s, const StepTimes& t, bool grouped) {
  const StepCostModel* c = policy ? &policy->costs() : nullptr;
  auto predicted = [&](double (StepCostModel::*f)(const StepShape&) const) { return c ? 1e3 * (c->*f)(s) : 0.0; };
  std::fprintf(stderr, "step t %.1f B %lld K %lld S %lld L %lld | ms predicted/measured: draft %.1f/%.1f verify %.1f/%.1f "
               "align %.1f/%.1f | grouped %d reused %d\n",
               since_ms(), static_cast<long long>(s.rows), static_cast<long long>(s.k), static_cast<long long>(s.context),
               static_cast<long long>(s.lag), predicted(&StepCostModel::predict_draft), 1e3 * t.draft_s,
               predicted(&StepCostModel::predict_verify), 1e3 * t.verify_s, predicted(&StepCostModel::predict_align),
               1e3 * t.align_s, static_cast<int>(grouped), static_cast<int>(s.reused));
}

void trace_engine(const char* mode, int64_t batch, int64_t window, bool adaptive, int64_t k) {
  started() = std::chrono::steady_clock::now();
  std::fprintf(stderr, "engine %s B %lld W %lld adaptive %d K %lld\n", mode, static_cast<long long>(batch),
               static_cast<long long>(window), static_cast<int>(adaptive), static_cast<long long>(k));
}

void trace_slot(int64_t slot, int64_t prompt, int64_t target_kept, int64_t draft_kept) {
  std::fprintf(stderr, "slot t %.1f slot %lld prompt %lld kept %lld draft %lld\n", since_ms(), static_cast<long long>(slot),
               static_cast<long long>(prompt), static_cast<long long>(target_kept), static_cast<long long>(draft_kept));
}

void trace_prefill(size_t rows, double seconds) {
  std::fprintf(stderr, "prefill t %.1f rows %zu ms %.1f\n", since_ms(), rows, 1e3 * seconds);
}

}  // namespace exspec
