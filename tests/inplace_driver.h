// A sequential driver of the in-place mode for the float64 oracle tests (issue 18, phase 1):
// continuous batching over the model-level step functions of model/inplace.h. Sequences arrive
// at given steps, wait while the store is full, take a slot, are prefilled in chunks interleaved
// with decode steps (one prefill forward, then one decode step), decode in batches of at most B
// of whichever sequences are ready, and leave at EOS, max_tokens or cancellation, freeing their
// slot for the next. The Scheduler runs the same model functions in --mode inplace (and the
// oracle sweeps test it there); this loop adds what those sweeps cannot schedule: arrivals and
// cancellations at chosen steps, and the draft's eager prefill through prefill_chunk itself.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "model/generation.h"
#include "model/inplace.h"
#include "model/slot_table.h"

namespace exspec {

class Decoder;
class DraftLengthPolicy;

namespace test {

struct InplaceConfig {
  int64_t batch_size = 8;      // B: rows of one decode step at most
  int64_t max_sequences = 16;  // slots in each store: live sequences at most
  int64_t chunk_tokens = 64;   // prefill budget: token positions per prefill forward
  int64_t k = 3;               // fixed K (no policy); 0 = plain target steps
  std::shared_ptr<DraftLengthPolicy> policy;  // K per step when set (auto, random)
};

// When things happen, in driver steps (an iteration: admissions, one prefill forward if any
// sequence is prefilling, one decode step if any is ready). -1 / absent: at once / never.
struct InplaceEvents {
  std::vector<int64_t> arrive_at;  // per request
  std::map<size_t, int64_t> cancel_at;  // request -> step at which its client goes away
};

struct InplaceStats {
  int64_t steps = 0, decode_steps = 0, prefill_forwards = 0;
  int64_t drafted = 0, accepted = 0;
  std::map<int64_t, int64_t> k_steps;  // K -> decode steps
  int64_t max_live = 0, max_waiting = 0;
  // Decode steps that ran while some sequence was still prefilling (chunked prefill interleaved).
  int64_t decode_during_prefill = 0;
  int64_t slot_reuses = 0;  // admissions into a slot that an earlier sequence had used
};

class InplaceRunner {
 public:
  // draft null: plain target steps only (nonspec in place).
  InplaceRunner(std::shared_ptr<const Decoder> target, std::shared_ptr<const Decoder> draft, InplaceConfig c);
  // Results in request order; a cancelled sequence keeps what it had (finish None).
  std::vector<SeqResult> run(const std::vector<SeqRequest>& requests, const InplaceEvents& events = {});
  const InplaceStats& stats() const { return stats_; }

 private:
  struct Live;
  void admit(const std::vector<SeqRequest>& requests, std::vector<Live>& live, std::vector<size_t>& waiting);
  void decode(const std::vector<SeqRequest>& requests, std::vector<Live>& live, std::vector<SeqResult>& out);
  int64_t choose_k(const std::vector<SeqRequest>& requests, const std::vector<Live*>& rows, const std::vector<SeqResult>& out);

  std::shared_ptr<const Decoder> target_, draft_;
  InplaceConfig c_;
  KVStore tstore_, dstore_;
  SlotTable slots_;
  InplaceModels models_;
  InplaceStats stats_;
  std::vector<bool> slot_used_before_;
  int64_t step_ = 0;
};

}  // namespace test
}  // namespace exspec
