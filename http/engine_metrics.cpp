#include "actors/scheduler/acceptance.h"
#include "actors/scheduler/proposer.h"
#include "http/metric_rows.h"
#include "http/metrics.h"

namespace exspec::http {
namespace {

using Row = MetricRow<ServerView>;
using Rows = std::vector<Row>;

bool loaded(const ServerView& v) { return v.e != nullptr; }

// A row of the engine's snapshot; shown once it is loaded.
template <class F>
Row engine(std::string name, const char* type, const char* help, F f) {
  return scalar<ServerView>(std::move(name), type, help, [f](const ServerView& v) { return f(*v.e); }).when(loaded);
}

// A row of the engine's totals since start.
template <class F>
Row totals(std::string name, const char* type, const char* help, F f) {
  return engine(std::move(name), type, help, [f](const EngineStats& e) { return f(e.totals); });
}

// In place: the KV stores' occupancy (a full store makes admission wait).
template <class F>
Row kv(std::string name, const char* help, F f) {
  return engine(std::move(name), "gauge", help, f).when([](const ServerView& v) { return v.e && v.e->slots > 0; });
}

double ratio(int64_t a, int64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

Row model_info() {
  return labelled<ServerView>("exspec_model_info", "gauge", "The served model pair and settings.",
                              [](const ServerView& v) {
                                const ModelInfo& i = *v.info;
                                return Samples{{"model=\"" + v.served_name + "\",draft=\"" + model_label(i.draft_dir) +
                                                    "\",architecture=\"" + i.architecture + "\",dtype=\"" + i.dtype +
                                                    "\",device=\"" + i.device + "\",mode=\"" + v.mode +
                                                    "\",draft_tokens=\"" + v.draft_tokens + "\"",
                                                1}};
                              })
      .when([](const ServerView& v) { return v.e && v.info; });
}

Rows queue_rows() {
  using E = EngineStats;
  return {
      model_info(),
      engine("exspec_queue_depth", "gauge", "Sequences waiting for the window.", [](const E& e) { return e.queued; }),
      engine("exspec_active_sequences", "gauge", "Sequences in the window.", [](const E& e) { return e.active; }),
      kv("exspec_kv_slots", "Slots of each in-place KV store.", [](const E& e) { return e.slots; }),
      kv("exspec_kv_slots_used", "Slots held by live sequences.", [](const E& e) { return e.slots_used; }),
      kv("exspec_kv_blocks", "Blocks of the target's KV store.", [](const E& e) { return e.blocks.total; }),
      kv("exspec_kv_blocks_used", "Blocks held by live sequences.", [](const E& e) { return e.blocks.held; }),
      kv("exspec_kv_blocks_free", "Blocks no live sequence holds (cached ones included).",
         [](const E& e) { return e.blocks.total - e.blocks.held; }),
      kv("exspec_kv_blocks_cached", "Blocks the prefix cache keeps (held or not).", [](const E& e) { return e.blocks.cached; }),
      engine("exspec_sequences_submitted_total", "counter", "Sequences submitted.", [](const E& e) { return e.submitted; }),
      engine("exspec_sequences_finished_total", "counter", "Sequences finished.", [](const E& e) { return e.finished; }),
      engine("exspec_sequences_cancelled_total", "counter", "Sequences cancelled (stop strings, disconnects).",
             [](const E& e) { return e.cancelled; }),
  };
}

Rows step_rows() {
  using T = RunStats;
  return {
      totals("exspec_steps_total", "counter", "Batches run (one verification forward each).", [](const T& t) { return t.steps; }),
      totals("exspec_grouped_steps_total", "counter", "Steps whose rows all had the same length (no padding).",
             [](const T& t) { return t.grouped_steps; }),
      totals("exspec_spec_decode_num_drafts_total", "counter", "Row verifications (one draft proposal per row).",
             [](const T& t) { return t.row_verifications; }),
      totals("exspec_spec_decode_num_draft_tokens_total", "counter", "Draft tokens proposed.", [](const T& t) { return t.drafted; }),
      totals("exspec_spec_decode_num_accepted_tokens_total", "counter", "Draft tokens accepted.",
             [](const T& t) { return t.accepted; }),
  };
}

Rows cache_and_time_rows() {
  using T = RunStats;
  return {
      totals("exspec_prefix_cache_queries_total", "counter", "In place: prompt tokens looked up in the cached blocks.",
             [](const T& t) { return t.prefix_queried; }),
      totals("exspec_prefix_cache_hits_total", "counter", "In place: prompt tokens found there, not prefilled again.",
             [](const T& t) { return t.prefix_hit; }),
      totals("exspec_prefix_cache_copied_blocks_total", "counter",
             "In place: cached blocks copied into a new sequence's own blocks (read as a view after).",
             [](const T& t) { return t.prefix_copied; }),
      totals("exspec_slot_moves_total", "counter", "In place: rows moved to another slot so that a step's slots are consecutive.",
             [](const T& t) { return t.slot_moves; }),
      totals("exspec_gathered_steps_total", "counter", "In place: steps whose keys were not read as one view (gathered at every layer).",
             [](const T& t) { return t.gathered_steps; }),
      totals("exspec_preemptions_total", "counter",
             "In place: sequences sent back to the queue for want of KV blocks (recomputed later, exactly).",
             [](const T& t) { return t.preemptions; }),
      totals("exspec_committed_tokens_total", "counter", "Tokens appended to sequences.", [](const T& t) { return t.committed; }),
      totals("exspec_acceptance_rate", "gauge", "Accepted / drafted tokens since start.",
             [](const T& t) { return t.acceptance_rate(); }),
      totals("exspec_tokens_per_verification", "gauge", "Committed tokens per row verification since start.",
             [](const T& t) { return t.tokens_per_verification(); }),
      totals("exspec_grouping_rate", "gauge", "Share of steps that were same-length groups.", [](const T& t) { return t.grouping_rate(); }),
      totals("exspec_alignment_overhead_share", "gauge", "align / (draft + verify + align) seconds.",
             [](const T& t) { return t.overhead_share(); }),
      totals("exspec_alignment_seconds_total", "counter", "Realignment (unpad-append-repad) seconds.", [](const T& t) { return t.align_s; }),
      totals("exspec_draft_seconds_total", "counter", "Draft forward seconds.", [](const T& t) { return t.draft_s; }),
      totals("exspec_verify_seconds_total", "counter", "Verification forward seconds.", [](const T& t) { return t.verify_s; }),
      totals("exspec_prefill_seconds_total", "counter", "Prefill seconds.", [](const T& t) { return t.prefill_s; }),
  };
}

// Acceptance falls with temperature (a draft d is accepted with probability p(d)).
Row by_band(std::string name, const char* type, const char* help, double (*f)(const RunStats&, int)) {
  return labelled<ServerView>(std::move(name), type, help, [f](const ServerView& v) {
           Samples s;
           for (int b = 0; b < kTemperatureBands; ++b)
             s.emplace_back(std::string("temperature=\"") + temperature_band_name(b) + "\"", f(v.e->totals, b));
           return s;
         })
      .when(loaded);
}

// By where the drafts came from (actors/scheduler/proposer.h): the draft model, prompt lookup, predictions.
Row by_proposer(std::string name, const char* type, const char* help, double (*f)(const RunStats&, int)) {
  return labelled<ServerView>(std::move(name), type, help, [f](const ServerView& v) {
           Samples s;
           for (int p = 0; p < kProposers; ++p)
             s.emplace_back(std::string("proposer=\"") + proposer_name(static_cast<Proposer>(p)) + "\"", f(v.e->totals, p));
           return s;
         })
      .when(loaded);
}

Rows origin_rows() {
  using T = RunStats;
  return {
      by_band("exspec_spec_decode_num_draft_tokens_by_temperature_total", "counter", "Draft tokens proposed, by temperature band.",
              [](const T& t, int b) { return static_cast<double>(t.band_drafted[b]); }),
      by_band("exspec_spec_decode_num_accepted_tokens_by_temperature_total", "counter",
              "Draft tokens accepted, by temperature band.", [](const T& t, int b) { return static_cast<double>(t.band_accepted[b]); }),
      by_band("exspec_acceptance_rate_by_temperature", "gauge", "Accepted / drafted tokens since start, by temperature band.",
              [](const T& t, int b) { return ratio(t.band_accepted[b], t.band_drafted[b]); }),
      by_proposer("exspec_spec_decode_num_draft_tokens_by_proposer_total", "counter",
                  "Draft tokens proposed, by proposer (model, ngram, prediction).",
                  [](const T& t, int p) { return static_cast<double>(t.proposer_drafted[p]); }),
      by_proposer("exspec_spec_decode_num_accepted_tokens_by_proposer_total", "counter", "Draft tokens accepted, by proposer.",
                  [](const T& t, int p) { return static_cast<double>(t.proposer_accepted[p]); }),
      by_proposer("exspec_acceptance_rate_by_proposer", "gauge", "Accepted / drafted tokens since start, by proposer.",
                  [](const T& t, int p) { return ratio(t.proposer_accepted[p], t.proposer_drafted[p]); }),
  };
}

Row draft_lengths() {
  return labelled<ServerView>("exspec_draft_length_steps_total", "counter", "Steps by draft length K (K = 0: a plain target step).",
                              [](const ServerView& v) {
                                Samples s;
                                const std::vector<int64_t>& k = v.e->totals.k_steps;
                                for (size_t i = 0; i < k.size(); ++i)
                                  s.emplace_back("k=\"" + std::to_string(i) + "\"", static_cast<double>(k[i]));
                                return s;
                              })
      .when([](const ServerView& v) { return v.e && !v.e->totals.k_steps.empty(); });
}

bool adaptive(const ServerView& v) { return v.e && v.e->speculation.adaptive; }

template <class F>
Row estimate(std::string name, const char* help, F f) {
  return scalar<ServerView>(std::move(name), "gauge", help, [f](const ServerView& v) { return f(v.e->speculation); })
      .when(adaptive);
}

Rows adaptive_rows() {
  using S = SpeculationEstimates;
  return {
      estimate("exspec_adaptive_acceptance_estimate", "Adaptive K: running estimate of the per-draft acceptance probability.",
               [](const S& s) { return s.acceptance; }),
      labelled<ServerView>("exspec_adaptive_acceptance_estimate_by_temperature", "gauge",
                           "Adaptive K: the acceptance estimate a fresh sequence of each temperature band starts from.",
                           [](const ServerView& v) {
                             Samples out;
                             const std::vector<double>& a = v.e->speculation.band_acceptance;
                             for (size_t b = 0; b < a.size(); ++b)
                               out.emplace_back(std::string("temperature=\"") + temperature_band_name(static_cast<int>(b)) + "\"", a[b]);
                             return out;
                           })
          .when(adaptive),
      estimate("exspec_adaptive_last_draft_tokens", "Adaptive K: the K of the last step chosen.", [](const S& s) { return s.last_k; }),
      estimate("exspec_adaptive_predicted_step_seconds", "Adaptive K: predicted cost of the last step chosen.",
               [](const S& s) { return s.last_predicted_s; }),
      estimate("exspec_adaptive_expected_tokens", "Adaptive K: expected committed tokens of the last step chosen.",
               [](const S& s) { return s.last_expected_tokens; }),
      labelled<ServerView>("exspec_adaptive_cost_coefficient_seconds", "gauge",
                           "Adaptive K: the step cost model's coefficients (actors/scheduler/cost_model.h), seconds per unit of each term.",
                           [](const ServerView& v) {
                             Samples out;
                             for (const auto& [name, value] : v.e->speculation.coefficients) {
                               const auto dot = name.find('.');
                               out.emplace_back("phase=\"" + name.substr(0, dot) + "\",term=\"" + name.substr(dot + 1) + "\"", value);
                             }
                             return out;
                           })
          .when(adaptive),
  };
}

void append(Rows& to, Rows from) { to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end())); }

}  // namespace

Rows engine_rows() {
  Rows r = queue_rows();
  append(r, step_rows());
  return r;
}

Rows speculation_rows() {
  Rows r = origin_rows();
  append(r, cache_and_time_rows());
  r.push_back(draft_lengths());
  append(r, adaptive_rows());
  return r;
}

}  // namespace exspec::http
