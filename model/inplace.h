// The in-place speculative step (issue 18): sequences live in their slots of a KVStore per
// model (model/kv_store.h) from admission to finish; a step is any list of them. No realignment,
// no batch assembly: each forward writes each row at its own offset, and a verification keeps
// what it accepted by setting the row's counters. The rows are SlotRows (model/slot_row.h):
// their counters say what each store holds, and every forward here is handed them (the stores
// keep no lengths); the functions advance the counters of what they stored.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "model/accept.h"
#include "model/kv_store.h"
#include "model/model_set.h"
#include "model/sampling.h"
#include "model/slot_row.h"

namespace exspec {

class Decoder;

// One prefill forward of at most `budget` prompt tokens per model, over the first n rows still
// prefilling (in the given order, so earlier arrivals go first), each storing min(its
// remaining, T) tokens, T the largest width whose tokens fit the budget and whose n x T padded
// positions fit twice it (the products run on content only; attention sees the padding): n is
// the count that stores the most tokens; their target_len advance by what they stored. The
// draft, when there is one, stores the same chunk and its draft_len follow (the actor pipeline
// runs the draft's chunk on the drafter, passing it as the only model, on a copy of the rows:
// the rule then sees the same lengths and picks the same chunk). Returns the tokens stored.
// logprobs (echo): per row, the target's logprob of each prompt token after a position the chunk
// stored (the logits of every position it stores, log-softmax in float64 on the host), with the
// `top` most likely tokens; rows it did not store get none.
int64_t prefill_chunk(const ModelSet& m, const std::vector<SlotRow*>& rows, int64_t budget, int64_t top = -1,
                      std::vector<std::vector<TokenLogprob>>* logprobs = nullptr);

// The draft's K greedy tokens for each row ([B, K] int64 on the draft's device, so that drafting
// waits for nothing on the host; [B, 0] CPU when k == 0): its first
// forward feeds each row's lag and pending (right-padded), then K - 1 one-token forwards.
// m.target / m.target_store may be null (the drafter of the actor pipeline has only the draft).
// sampling (optional, per row): a row with a grammar's matcher drafts the masked argmax, so that
// its drafts stay inside the grammar (the matcher is back where it was on return).
at::Tensor draft_inplace(const ModelSet& m, const std::vector<const SlotRow*>& rows, int64_t k,
                         const std::vector<RowSampling>& sampling = {});

// One target forward over [pending, d_1..d_K] per row, written in place; the acceptance rule of
// every mode (model/accept.h). drafts [B, 0] is a plain target step.
VerifyResult verify_inplace(const ModelSet& m, const std::vector<const SlotRow*>& rows, const at::Tensor& drafts,
                            const std::vector<RowSampling>& sampling = {});

// Keeps what was accepted: row b's tokens gain d_1..d_a and the bonus; target_len becomes
// tokens - 1 (the rejected positions are overwritten later); draft_len follows lag_after_step.
// Nothing is copied and no store is touched: the counters are what the next forwards are handed.
// The verifier commits through it (StepJob::run_target, actors/jobs/inplace_jobs.cpp), and the
// model-level tests do. agree: per row, the leading drafts the draft model fed (empty: all k, the
// drafts were its own).
void commit_inplace(const std::vector<SlotRow*>& rows, const VerifyResult& v, int64_t k,
                    const std::vector<int64_t>& agree = {});

}  // namespace exspec
