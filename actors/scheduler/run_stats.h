// What one run (or the server since start) measured: the figures `--stats`, /metrics and
// `exspec bench` report (README, "Benchmarks: exspec bench").
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/scheduler/proposer.h"

namespace exspec {

// A paged store's blocks: all of them, those held by live sequences, and those cached.
struct BlockCounts {
  int64_t total = 0, held = 0, cached = 0;
};

struct RunStats {
  double wall_s = 0, prefill_s = 0, draft_s = 0, verify_s = 0, align_s = 0;
  int64_t steps = 0;               // batches run (one verification forward each)
  int64_t grouped_steps = 0;       // of which same-length groups (no padding)
  int64_t reused_steps = 0;        // of which reused the previous batch of the same rows (no copy)
  int64_t row_verifications = 0;   // sum of batch sizes over steps
  int64_t drafted = 0;             // draft tokens proposed
  int64_t accepted = 0;            // draft tokens accepted
  int64_t committed = 0;           // tokens appended to sequences (after stop trimming)
  int64_t sequences = 0;
  int64_t prefix_queried = 0;      // in place: prompt positions looked up in the block cache
  int64_t prefix_hit = 0;          // of which found there (not prefilled again)
  int64_t prefix_copied = 0;       // cached blocks copied into a newcomer's own blocks (no gather)
  int64_t slot_moves = 0;          // in place: rows moved to another slot before a step
  int64_t gathered_steps = 0;      // in place: steps whose keys were not read as one view
  int64_t preemptions = 0;         // in place: sequences sent back to the queue for want of blocks
  // In place: host time choosing and building the pieces of work handed out, after the results
  // they follow (plan_s), and choosing the next step ahead while a step ran (plan_ahead_s); the
  // steps planned ahead that were kept, and those made again (actors/scheduler/plan_ahead.h).
  double plan_s = 0, plan_ahead_s = 0;
  int64_t plans_kept = 0, plans_redone = 0;
  std::vector<int64_t> k_steps;    // steps run with K = index (adaptive K's choices)
  // drafted / accepted per temperature band (actors/scheduler/acceptance.h)
  std::array<int64_t, 4> band_drafted{}, band_accepted{};
  void count_band(int band, int64_t k, int64_t a) {
    band_drafted[band] += k;
    band_accepted[band] += a;
  }
  // drafted / accepted per proposer (actors/scheduler/proposer.h: model, ngram, prediction)
  std::array<int64_t, kProposers> proposer_drafted{}, proposer_accepted{};
  void count_proposer(int proposer, int64_t k, int64_t a) {
    proposer_drafted[proposer] += k;
    proposer_accepted[proposer] += a;
  }

  double tokens_per_s() const { return wall_s > 0 ? committed / wall_s : 0; }
  double acceptance_rate() const { return drafted ? static_cast<double>(accepted) / drafted : 0; }
  double tokens_per_verification() const {
    return row_verifications ? static_cast<double>(committed) / row_verifications : 0;
  }
  double grouping_rate() const { return steps ? static_cast<double>(grouped_steps) / steps : 0; }
  // Alignment overhead as a share of the step time (draft + verify + alignment).
  double overhead_share() const {
    const double t = draft_s + verify_s + align_s;
    return t > 0 ? align_s / t : 0;
  }
  double mean_k() const;
  void count_k(int64_t k);
  std::string to_json() const;
};

// What happened between two snapshots of cumulative stats (wall_s is not cumulative: kept 0).
RunStats diff(const RunStats& after, const RunStats& before);

}  // namespace exspec
