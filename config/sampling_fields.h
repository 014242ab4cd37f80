// The sampling fields of a request (temperature, top_p, top_k, min_p, penalties, logit_bias, seed,
// n, logprobs) validated into SamplingParams: the one owner of their ranges and defaults, for the
// server's completions / chat bodies (http/sampling_request.h maps the errors to 400s) and for
// `exspec generate`'s flags (app/cmd_generate.cpp writes them as such a body). Torch-free.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "model/generation_defaults.h"
#include "model/sampling_params.h"

namespace exspec {

// A field out of range or of the wrong type: what() names it; param is the field, code OpenAI's
// ("invalid_value", "invalid_type", "unsupported_value").
struct SamplingFieldError : std::invalid_argument {
  SamplingFieldError(std::string param, const std::string& message, std::string code = "invalid_value")
      : std::invalid_argument(message), param(std::move(param)), code(std::move(code)) {}
  std::string param, code;
};

struct SamplingRequest {
  SamplingParams params;  // choice 0; choice i of n differs only by params.choice = i
  int64_t n = 1;
  bool seed_given = false;  // else params.seed is a fresh random one (returned to the client)
  nlohmann::ordered_json seed;      // what the response reports: the client's seed as sent, or the fresh one
};

// chat: logprobs is a boolean with top_logprobs (<= 20); completions: logprobs is an integer
// (<= 5). vocab bounds logit_bias token ids and top_k. A field the body leaves out takes the
// checkpoint's default where `defaults` has one (generation_config.json), else the API's.
// Throws SamplingFieldError.
SamplingRequest parse_sampling_fields(const nlohmann::ordered_json& body, bool chat, int64_t vocab,
                                      const GenerationDefaults& defaults = {});

}  // namespace exspec
