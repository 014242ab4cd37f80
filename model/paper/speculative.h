// One speculative step on a SpecBatch, split into the paper's phases so that different actors
// can run them: draft (K greedy draft tokens), BatchVerify (Algorithm 1), commit (keep accepted
// drafts and the bonus token, drop rejected positions from both caches).
#pragma once
#include <ATen/core/Tensor.h>

#include "model/accept.h"
#include "model/sampling.h"
#include "model/paper/spec_batch.h"

namespace exspec {

class Decoder;

// Feeds the draft's lag (if any), the pending token and K-1 drafts to the draft
// model; returns the K greedy drafts [B, K] (CPU int64). Appends to b.draft.
at::Tensor draft_tokens(const Decoder& draft, SpecBatch& b, int64_t k);

// One target forward over [pending, d_1..d_K] per row (appends K+1 positions to b.target).
// drafts may be [B, 0]: then this is a plain non-speculative step.
// rows: per row sampling (empty = every row greedy). A sampled row's column j holds the token
// plain sampling draws at its absolute position lengths + j from the prefix ... d_j
// (sample_token); drafts are accepted while they equal it, the first differing sample is the
// bonus (accept, model/accept.h). Greedy rows without bias or penalties keep the tensor argmax.
VerifyResult verify(const Decoder& target, SpecBatch& b, const at::Tensor& drafts,
                    const std::vector<RowSampling>& rows = {});

// Commits the verification: rows keep pending + accepted drafts in both caches (rejected
// positions become holes in the mask, or are truncated away when every row accepted the same
// count), the bonus becomes pending, lengths grow by accepted + 1.
void commit(SpecBatch& b, const VerifyResult& v, const at::Tensor& drafts);

}  // namespace exspec
