#include "http/sampling_request.h"

#include "http/api_error.h"

namespace exspec::http {

SamplingRequest parse_sampling(const nlohmann::ordered_json& body, bool chat, int64_t vocab,
                               const GenerationDefaults& defaults) {
  try {
    return parse_sampling_fields(body, chat, vocab, defaults);
  } catch (const SamplingFieldError& e) {
    throw bad_param(e.param, e.what(), e.code);
  }
}

}  // namespace exspec::http
