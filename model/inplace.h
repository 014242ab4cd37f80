// The in-place speculative step (issue 18): sequences live in their slots of a KVStore per
// model (model/kv_store.h) from admission to finish; a step is any list of them. No realignment,
// no batch assembly: each forward writes each row at its own offset, and a verification keeps
// what it accepted by setting the row's length.
//
// Invariant (the same as the paper modes', README "How a step works"): a sequence's tokens are
// prompt, then generated; the last one, `pending`, is in neither store. The target's slot holds
// every token before pending once prefilled. The draft's slot holds a prefix of them, shorter by
// its lag: a step with K = 0 feeds the draft nothing (pending joins the lag), and when all K
// drafts were accepted d_K was never fed to the draft. The next drafting step feeds the lag
// first, in the same forward. The lag is never stored: it is tokens - 1 - the draft's length.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "model/kv_store.h"
#include "model/sampling.h"
#include "model/speculative.h"

namespace exspec {

class Decoder;

// A sequence in the stores: the same slot in the target's store and in the draft's.
struct InplaceSeq {
  int64_t slot = -1;
  std::vector<int64_t> tokens;  // prompt, then generated; the last is pending
};

// The target with its store, and optionally the draft with its own (same slot count).
struct InplaceModels {
  const Decoder* target = nullptr;
  KVStore* target_store = nullptr;
  const Decoder* draft = nullptr;
  KVStore* draft_store = nullptr;
};

// The draft's lag after a step that drafted k tokens of which a were accepted: with k = 0 the
// draft was fed nothing (pending joins its lag); otherwise it holds pending and d_1..d_min(a, k-1),
// which leaves d_k unfed when every draft was accepted. The one statement of this rule.
inline int64_t lag_after_step(int64_t lag, int64_t k, int64_t a) { return k == 0 ? lag + 1 : (a == k ? 1 : 0); }

// Prompt tokens the target has yet to store (0: the sequence can decode).
int64_t prefill_remaining(const InplaceModels& m, const InplaceSeq& s);
// Tokens the draft must catch up before it can draft for this sequence.
int64_t draft_lag(const InplaceModels& m, const InplaceSeq& s);

// One prefill forward of at most `budget` prompt tokens per model, over the first n rows still
// prefilling (in the given order, so earlier arrivals go first), each storing min(its
// remaining, T) tokens, T the largest width whose tokens fit the budget and whose n x T padded
// positions fit twice it (the products run on content only; attention sees the padding): n is
// the count that stores the most tokens. The draft, when there is one, stores the same chunk
// (the actor pipeline runs the draft's chunk on the drafter, passing it as the only model: the
// rule then sees the same lengths and picks the same chunk). Returns the tokens stored.
int64_t prefill_chunk(const InplaceModels& m, const std::vector<const InplaceSeq*>& rows, int64_t budget);

// The draft's K greedy tokens for each row ([B, K] CPU int64; [B, 0] when k == 0): its first
// forward feeds each row's lag and pending (right-padded), then K - 1 one-token forwards.
// m.target / m.target_store may be null (the drafter of the actor pipeline has only the draft).
at::Tensor draft_inplace(const InplaceModels& m, const std::vector<const InplaceSeq*>& rows, int64_t k);

// One target forward over [pending, d_1..d_K] per row, written in place; the acceptance rule of
// every mode (accept() in model/speculative.h). drafts [B, 0] is a plain target step.
VerifyResult verify_inplace(const InplaceModels& m, const std::vector<const InplaceSeq*>& rows, const at::Tensor& drafts,
                            const std::vector<RowSampling>& sampling = {});

// Keeps what was accepted: row b's tokens gain d_1..d_a and the bonus; the target's length
// becomes tokens - 1 (its rejected positions are overwritten later); the draft's length follows
// lag_after_step (when m.draft_store is set). Nothing is copied. The verifier's phase commits
// through it (actors/step_phases.cpp), and the model-level tests do.
void commit_inplace(const InplaceModels& m, const std::vector<InplaceSeq*>& rows, const VerifyResult& v, int64_t k);

}  // namespace exspec
