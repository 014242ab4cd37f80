// What a sequence asks of the sampler: the OpenAI / vLLM sampling parameters, the seed and the
// choice index that key its random numbers, and how many logprobs to return. Torch-free.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace exspec {

struct SamplingParams {
  double temperature = 0;  // 0 = greedy (argmax), exactly as without sampling
  double top_p = 1;        // nucleus: the smallest set of most likely tokens whose mass reaches top_p
  int64_t top_k = 0;       // 0 = off
  double min_p = 0;        // tokens below min_p * (the most likely token's probability) are dropped
  double presence_penalty = 0, frequency_penalty = 0;  // over this choice's generated tokens
  double repetition_penalty = 1;                       // over prompt + generated (vLLM's rule)
  std::vector<std::pair<int64_t, double>> logit_bias;  // token id -> added to its logit
  uint64_t seed = 0;
  uint64_t choice = 0;   // n > 1: the choices of one request differ only by this index
  int64_t logprobs = -1;  // -1: none; N >= 0: the chosen token's logprob and the N most likely
  // vLLM's min_tokens: until this many tokens are generated, the stop token ids (EOS and
  // stop_token_ids: min_tokens_masked) cannot be chosen (their logits are -inf).
  int64_t min_tokens = 0;
  std::vector<int64_t> min_tokens_masked;

  bool penalized() const { return presence_penalty != 0 || frequency_penalty != 0 || repetition_penalty != 1; }
  bool masks_stops() const { return min_tokens > 0 && !min_tokens_masked.empty(); }
  // Penalties count the tokens so far, and min_tokens how many were generated.
  bool needs_history() const { return penalized() || masks_stops(); }
  // The logits are used as they are: argmax of the raw logits, today's greedy path.
  bool plain_greedy() const { return temperature == 0 && logit_bias.empty() && !penalized() && !masks_stops(); }
};

// One generated token's log-probability under the TARGET's log-softmax of its raw logits, and the
// most likely alternatives (token id, logprob), most likely first.
struct TokenLogprob {
  int64_t token = 0;
  double logprob = 0;
  std::vector<std::pair<int64_t, double>> top;
};

}  // namespace exspec
