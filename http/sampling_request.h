// The sampling fields of a completions / chat request (temperature, top_p, top_k, min_p,
// penalties, logit_bias, seed, n, logprobs) validated into SamplingParams. Every rejection is an
// ApiError naming the field. Torch-free.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

#include "model/generation_defaults.h"
#include "model/sampling_params.h"

namespace exspec::http {

struct SamplingRequest {
  SamplingParams params;  // choice 0; choice i of n differs only by params.choice = i
  int64_t n = 1;
  bool seed_given = false;  // else params.seed is a fresh random one (returned to the client)
  nlohmann::ordered_json seed;      // what the response reports: the client's seed as sent, or the fresh one
};

// chat: logprobs is a boolean with top_logprobs (<= 20); completions: logprobs is an integer
// (<= 5). vocab bounds logit_bias token ids. A field the body leaves out takes the checkpoint's
// default where `defaults` has one (generation_config.json), else the API's.
SamplingRequest parse_sampling(const nlohmann::ordered_json& body, bool chat, int64_t vocab,
                               const GenerationDefaults& defaults = {});

}  // namespace exspec::http
