// The acceptance rule: which of a row's drafts the target keeps, and its bonus token. One
// definition for every mode that verifies (in place, model/inplace.h; the paper's modes,
// model/paper/speculative.h), so that all of them accept and sample alike. Per row, column j of
// the target's logits over [pending, d_1..d_K] gives the token plain decoding puts at absolute
// position length + j (the argmax, or sample_token of model/sampling.h with the row's seed and
// position); drafts are accepted while they equal it, and the first difference (or the column
// after d_K) is the bonus token. What changes the target's choice at a position (logit bias,
// penalties, a grammar's mask) belongs in that per-column choice, so that a draft is accepted
// exactly when plain decoding would have chosen it.
#pragma once
#include <ATen/core/Tensor.h>

#include <vector>

#include "model/sampling.h"

namespace exspec {

struct VerifyResult {
  at::Tensor accepted;  // [B] int64: drafts accepted (first mismatch), 0..K
  at::Tensor bonus;     // [B] int64: the target's token at the first mismatch (or after d_K)
  at::Tensor tokens;    // [B, K + 1] int64: drafts[:a] then bonus at column a (rest unspecified)
  // Per row: the logprobs of its a + 1 committed tokens (empty unless params.logprobs >= 0).
  std::vector<std::vector<TokenLogprob>> logprobs;
};

// logits [B, K+1, vocab] over [pending, d_1..d_K] per row; drafts [B, K]; lengths [B] (CPU
// int64): each row's tokens so far, pending included. rows: per row sampling (empty: every row
// greedy). Greedy rows without bias or penalties keep the tensor argmax; the others are chosen
// on the host in float64, column by column up to the first that differs from its draft.
VerifyResult accept(const at::Tensor& logits, const at::Tensor& drafts, const at::Tensor& lengths,
                    const std::vector<RowSampling>& rows = {});

// at::argmax(logits, -1) (the first maximum, the first NaN), in two vector passes over each row on
// the CPU in float32 (rowops::argmax_rows), at::argmax elsewhere: the greedy choice over
// 32,000-wide rows, where at::argmax was a visible part of a step.
at::Tensor argmax_last(const at::Tensor& logits);

}  // namespace exspec
