#include "actors/scheduler/run_stats.h"

#include <nlohmann/json.hpp>

namespace exspec {

double RunStats::mean_k() const {
  int64_t n = 0, sum = 0;
  for (size_t k = 0; k < k_steps.size(); ++k) n += k_steps[k], sum += static_cast<int64_t>(k) * k_steps[k];
  return n ? static_cast<double>(sum) / n : 0;
}

void RunStats::count_k(int64_t k) {
  if (k < 0) return;
  if (k_steps.size() <= static_cast<size_t>(k)) k_steps.resize(k + 1, 0);
  ++k_steps[k];
}

std::string RunStats::to_json() const {
  nlohmann::ordered_json j{{"sequences", sequences},
                           {"output_tokens", committed},
                           {"wall_s", wall_s},
                           {"tokens_per_s", tokens_per_s()},
                           {"verify_calls", steps},
                           {"ms_per_verify", steps ? 1000.0 * verify_s / steps : 0.0},
                           {"acceptance_rate", acceptance_rate()},
                           {"tokens_per_verification", tokens_per_verification()},
                           {"grouping_rate", grouping_rate()},
                           {"overhead_share", overhead_share()},
                           {"prefill_s", prefill_s},
                           {"draft_s", draft_s},
                           {"verify_s", verify_s},
                           {"align_s", align_s},
                           {"drafted", drafted},
                           {"prefix_queried", prefix_queried},
                           {"prefix_hit", prefix_hit},
                           {"prefix_copied", prefix_copied},
                           {"slot_moves", slot_moves},
                           {"gathered_steps", gathered_steps},
                           {"preemptions", preemptions},
                           {"plan_s", plan_s},
                           {"plan_ahead_s", plan_ahead_s},
                           {"plans_kept", plans_kept},
                           {"plans_redone", plans_redone},
                           {"accepted", accepted},
                           {"grouped_steps", grouped_steps},
                           {"reused_steps", reused_steps},
                           {"row_verifications", row_verifications},
                           {"mean_draft_tokens", mean_k()},
                           {"k_steps", k_steps},
                           {"drafted_by_temperature_band", band_drafted},
                           {"accepted_by_temperature_band", band_accepted},
                           {"drafted_by_proposer", proposer_drafted},
                           {"accepted_by_proposer", proposer_accepted}};
  return j.dump(2);
}

RunStats diff(const RunStats& a, const RunStats& b) {
  RunStats d;
  d.prefill_s = a.prefill_s - b.prefill_s;
  d.draft_s = a.draft_s - b.draft_s;
  d.verify_s = a.verify_s - b.verify_s;
  d.align_s = a.align_s - b.align_s;
  d.steps = a.steps - b.steps;
  d.grouped_steps = a.grouped_steps - b.grouped_steps;
  d.reused_steps = a.reused_steps - b.reused_steps;
  d.row_verifications = a.row_verifications - b.row_verifications;
  d.drafted = a.drafted - b.drafted;
  d.accepted = a.accepted - b.accepted;
  d.committed = a.committed - b.committed;
  d.sequences = a.sequences - b.sequences;
  d.prefix_queried = a.prefix_queried - b.prefix_queried;
  d.prefix_hit = a.prefix_hit - b.prefix_hit;
  d.prefix_copied = a.prefix_copied - b.prefix_copied;
  d.slot_moves = a.slot_moves - b.slot_moves;
  d.gathered_steps = a.gathered_steps - b.gathered_steps;
  d.preemptions = a.preemptions - b.preemptions;
  d.plan_s = a.plan_s - b.plan_s;
  d.plan_ahead_s = a.plan_ahead_s - b.plan_ahead_s;
  d.plans_kept = a.plans_kept - b.plans_kept;
  d.plans_redone = a.plans_redone - b.plans_redone;
  for (size_t i = 0; i < a.band_drafted.size(); ++i) {
    d.band_drafted[i] = a.band_drafted[i] - b.band_drafted[i];
    d.band_accepted[i] = a.band_accepted[i] - b.band_accepted[i];
  }
  for (size_t i = 0; i < a.proposer_drafted.size(); ++i) {
    d.proposer_drafted[i] = a.proposer_drafted[i] - b.proposer_drafted[i];
    d.proposer_accepted[i] = a.proposer_accepted[i] - b.proposer_accepted[i];
  }
  d.k_steps = a.k_steps;
  for (size_t k = 0; k < b.k_steps.size() && k < d.k_steps.size(); ++k) d.k_steps[k] -= b.k_steps[k];
  return d;
}

}  // namespace exspec
