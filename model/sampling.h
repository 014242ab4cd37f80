// The sampler that keeps speculative decoding output-equivalent: the token at absolute
// position t of a sequence is a pure function of the target's logits at t, the sequence's
// tokens before t, its SamplingParams and a uniform number that depends only on (seed, choice,
// t). Verification and plain decoding call the same function, so
// they draw the same token from the same prefix, whatever the batch around the row.
// Plain C++ over one row of logits in float64 (no tensors): the same on every device.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/sampling_params.h"

namespace exspec {

namespace grammar {
class Matcher;  // grammar/matcher.h (structured output, model/constrained.h)
}

// The tokens before position t: prompt, then generated; `extra` continues `generated` (the
// drafts before a verification column count as generated: they are the prefix if accepted).
struct TokenHistory {
  const int64_t* prompt = nullptr;
  size_t prompt_len = 0;
  const int64_t* generated = nullptr;
  size_t generated_len = 0;
  const int64_t* extra = nullptr;
  size_t extra_len = 0;
};

// Uniform in [0, 1) with 53 random bits: Philox-4x32-10 keyed by seed, subsequence = choice,
// counter = t. A counter-based generator: no state, no stream shared between sequences.
double sampling_uniform(uint64_t seed, uint64_t choice, int64_t t);

// The processed distribution: logit_bias, the min_tokens mask, penalties, temperature, top-k, top-p, min-p applied,
// normalised. Returns (token, probability) pairs in ascending token order (the fixed order of
// the inverse CDF). temperature must be > 0.
std::vector<std::pair<int64_t, double>> processed_distribution(const double* logits, int64_t vocab,
                                                               const SamplingParams& p, const TokenHistory& h);

// The token at absolute position t (t = number of tokens before it). temperature 0: the argmax
// of the biased and penalised logits (the first maximum, as at::argmax).
int64_t sample_token(const double* logits, int64_t vocab, const SamplingParams& p, const TokenHistory& h, int64_t t);

// A row's sampling state for one verification: its parameters and, when it is penalised, the
// tokens it has so far (penalties count them).
struct RowSampling {
  SamplingParams params;
  std::vector<int64_t> prompt, generated;  // filled only when params.needs_history()
  // Structured output: the sequence's matcher (null: free text). Shared, not copied: the step
  // that holds the sequence advances it (model/constrained.h).
  std::shared_ptr<grammar::Matcher> matcher;
  TokenHistory history(const int64_t* extra = nullptr, size_t extra_len = 0) const {
    return TokenHistory{prompt.data(), prompt.size(), generated.data(), generated.size(), extra, extra_len};
  }
};
// The row state of a sequence with these parameters and tokens (copies them only when needed).
RowSampling row_sampling(const SamplingParams& p, const std::vector<int64_t>& prompt,
                         const std::vector<int64_t>& generated);

// log-softmax of the raw logits: the chosen token's logprob and the `top` most likely tokens.
TokenLogprob token_logprob(const double* logits, int64_t vocab, int64_t token, int64_t top);

}  // namespace exspec
