// One speculative step on a SpecBatch, split into the paper's phases so that different actors
// can run them: draft (K greedy draft tokens), BatchVerify (Algorithm 1), commit (keep accepted
// drafts and the bonus token, drop rejected positions from both caches).
#pragma once
#include <ATen/core/Tensor.h>

#include "model/sampling.h"
#include "model/paper/spec_batch.h"

namespace exspec {

class Decoder;

// Feeds the draft's lag (if any), the pending token and K-1 drafts to the draft
// model; returns the K greedy drafts [B, K] (CPU int64). Appends to b.draft.
at::Tensor draft_tokens(const Decoder& draft, SpecBatch& b, int64_t k);

struct VerifyResult {
  at::Tensor accepted;  // [B] int64: drafts accepted (first mismatch), 0..K
  at::Tensor bonus;     // [B] int64: the target's token at the first mismatch (or after d_K)
  at::Tensor tokens;    // [B, K + 1] int64: drafts[:a] then bonus at column a (rest unspecified)
  // Per row: the logprobs of its a + 1 committed tokens (empty unless params.logprobs >= 0).
  std::vector<std::vector<TokenLogprob>> logprobs;
};

// One target forward over [pending, d_1..d_K] per row (appends K+1 positions to b.target).
// drafts may be [B, 0]: then this is a plain non-speculative step.
// rows: per row sampling (empty = every row greedy). A sampled row's column j holds the token
// plain sampling draws at its absolute position lengths + j from the prefix ... d_j
// (sample_token); drafts are accepted while they equal it, the first differing sample is the
// bonus. Greedy rows without bias or penalties keep the tensor argmax.
VerifyResult verify(const Decoder& target, SpecBatch& b, const at::Tensor& drafts,
                    const std::vector<RowSampling>& rows = {});

// The acceptance rule of verify(), from the target's logits [B, K+1, vocab] over
// [pending, d_1..d_K] per row; lengths [B] (CPU int64): each row's tokens so far, pending
// included (column j samples the token at absolute position lengths + j). Shared by every mode
// that verifies, so that all of them accept and sample alike.
VerifyResult accept(const at::Tensor& logits, const at::Tensor& drafts, const at::Tensor& lengths,
                    const std::vector<RowSampling>& rows = {});

// Commits the verification: rows keep pending + accepted drafts in both caches (rejected
// positions become holes in the mask, or are truncated away when every row accepted the same
// count), the bonus becomes pending, lengths grow by accepted + 1.
void commit(SpecBatch& b, const VerifyResult& v, const at::Tensor& drafts);

}  // namespace exspec
