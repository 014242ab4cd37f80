// Logprobs in the OpenAI shapes: completions {tokens, token_logprobs, top_logprobs, text_offset}
// and chat {content: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}.
// Values are the target's log-softmax of its raw logits (model/sampling.h). Torch-free.
#pragma once
#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/sampling_params.h"

namespace exspec {
class Tokenizer;
}

namespace exspec::http {

// Entries [from, to) of one choice's logprobs. Token strings come from the tokenizer (each
// token decoded alone; the id as text without one). offset: the completions text_offset of the
// first entry; advanced past the entries written.
nlohmann::ordered_json logprobs_json(const std::vector<TokenLogprob>& lps, size_t from, size_t to, bool chat,
                                     const Tokenizer* tokenizer, size_t& offset);

}  // namespace exspec::http
