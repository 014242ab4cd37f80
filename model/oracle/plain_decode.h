// Non-speculative batched decoding ("nonspec"): the oracle every other mode must equal. Greedy by
// default; a request's SamplingParams make it plain sampling (model/sampling.h), the definition
// that speculative sampling must equal token for token.
#pragma once
#include <vector>

#include "model/seq_request.h"

namespace exspec {

class Decoder;

// Decodes the requests in chunks of `batch_size` (left padded). Finished rows leave the batch
// at once; the result order follows the requests.
std::vector<SeqResult> plain_decode(const Decoder& model, const std::vector<SeqRequest>& requests,
                                       int64_t batch_size = 1);

// log p(prompt[t] | prompt[0..t)) for t = 1 .. T-1 under the model, with the `top` most likely
// tokens at each position (model/sampling.h's token_logprob, float64 on the host). The prompt
// goes through in chunks of 256 positions, so the logits held at once stay bounded.
std::vector<TokenLogprob> prompt_logprobs(const Decoder& model, const std::vector<int64_t>& prompt, int64_t top);

}  // namespace exspec
