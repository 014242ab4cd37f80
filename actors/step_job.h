// The unit of work that travels through the pipeline: a prefill of new sequences, or one
// speculative step of a batch. Its tensors have exactly one owner at a time: whichever actor
// holds the message. Receivers may modify the job (it is theirs now), never a tensor they did
// not create or own.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "actors/cost_model.h"
#include "actors/sequence_pool.h"
#include "model/spec_batch.h"
#include "model/speculative.h"

namespace exspec {

struct StepJob {
  enum class Kind { Prefill, Step };
  Kind kind = Kind::Step;
  int64_t serial = 0;         // per engine, for tracing
  std::vector<SeqId> ids;     // rows, in batch order

  // Prefill: prompt prefixes in, caches out (the pool-manager builds the SeqTensors).
  std::vector<std::vector<int64_t>> prefixes;  // each prompt but its last token
  std::vector<SeqCache> target_caches;

  // Step. exspec: `inputs` are the rows' pool states, assembled by the realigner; eqspec keeps
  // `batch` between steps and `drop_rows` lists rows to remove first (finished or cancelled).
  std::vector<std::shared_ptr<SeqTensors>> inputs;
  bool persistent = false;
  std::vector<int64_t> drop_rows;
  SpecBatch batch;
  int64_t k = 0;
  StepShape shape;  // what the draft-length policy predicted the cost of
  at::Tensor drafts;
  std::vector<RowSampling> sampling;  // per row (empty: every row plain greedy)
  VerifyResult verified;

  // Results for the pool-manager (plain data).
  std::vector<std::vector<int64_t>> committed;  // per row: accepted drafts then the bonus token
  std::vector<std::vector<TokenLogprob>> logprobs;  // per row, with `committed` (empty: none asked)
  std::vector<int64_t> accepted;
  std::vector<std::shared_ptr<SeqTensors>> outputs;  // exspec: each row's state after the step
  bool grouped = false;
  bool reused = false;  // the previous batch of exactly these rows was reused (no copy)
  std::string error;  // set by a role that failed; the pool-manager fails the job's sequences
  double draft_s = 0, verify_s = 0, align_s = 0, prefill_s = 0;
};

using JobPtr = std::shared_ptr<StepJob>;

}  // namespace exspec
