// What a sequence asks for and what it got: shared by every decoding mode.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/sampling_params.h"

namespace exspec {

enum class FinishReason { None, Stop, Length };
inline const char* to_string(FinishReason r) {
  return r == FinishReason::Stop ? "stop" : r == FinishReason::Length ? "length" : "none";
}

struct SeqRequest {
  std::vector<int64_t> prompt;
  int64_t max_tokens = 16;
  std::vector<int64_t> eos_ids;  // generation stops right after any of these (it is kept)
  SamplingParams sampling;       // default: greedy
};

struct SeqResult {
  std::vector<int64_t> tokens;  // generated ids only, the EOS that stopped it included
  FinishReason finish = FinishReason::None;
  std::string error;  // set when the engine failed this sequence (finish stays None)
  std::vector<TokenLogprob> logprobs;  // one per token when sampling.logprobs >= 0
};

// True when `token`, just generated as the n-th token, ends the sequence.
inline FinishReason finish_after(const SeqRequest& r, int64_t token, int64_t n_generated) {
  for (int64_t e : r.eos_ids)
    if (token == e) return FinishReason::Stop;
  return n_generated >= r.max_tokens ? FinishReason::Length : FinishReason::None;
}

}  // namespace exspec
