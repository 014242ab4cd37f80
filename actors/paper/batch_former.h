// Batch formation (ExSpec, Algorithm 3, Phase 1): choose the next batch from the window.
//
// The rule (measured in the README's benchmark section):
//  1. Bucket the ready sequences by length (prompt + generated tokens).
//  2. If the largest bucket holds at least max(2, ceil(min_group_fill * target)) sequences,
//     where target = min(B, ready), run a same-length group of up to B of them: no padding,
//     no mask or position work, caches simply stacked. Ties go to the bucket with the sequence
//     that has waited longest.
//  3. Otherwise run a mixed batch of the `target` sequences that have waited longest; it needs
//     realignment (unpad-append-repad).
//  4. Starvation bound: a sequence not advanced for more than max_wait steps is taken first,
//     in its bucket's group if that group qualifies, else in a mixed batch.
// With target == 1 (B = 1 or one ready sequence) every batch is a trivial group.
//  5. Groups exist to spare the realignment after a ragged verification. A plain step (K = 0,
//     adaptive draft length) is never ragged, so while speculation is off (`ragged` false) only
//     a full group is taken: a partial one would save nothing and cost a verification (partial
//     groups split 4 + 4 rows into 4 + 2 + 2 steps; docs/speculation.md has the measurement).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "actors/scheduler/sequence_pool.h"

namespace exspec {

struct Candidate {
  SeqId id;
  int64_t length;
  int64_t last_step;  // -1 = never advanced
};

struct BatchChoice {
  std::vector<SeqId> ids;
  bool same_length = false;
};

class BatchFormer {
 public:
  BatchFormer(size_t batch_size, double min_group_fill, int64_t max_wait)
      : batch_size_(batch_size), min_group_fill_(min_group_fill), max_wait_(max_wait) {}
  // ragged: the next steps are expected to draft (K > 0), so groups spare realignments.
  BatchChoice form(const std::vector<Candidate>& ready, int64_t step, bool ragged = true) const;

 private:
  size_t batch_size_;
  double min_group_fill_;
  int64_t max_wait_;
};

}  // namespace exspec
