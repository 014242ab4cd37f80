// OpenAI's Predicted Outputs: `"prediction": {"type": "content", "content": ...}` on both
// endpoints and in batch lines. The content is text (a string, or an array of
// {"type": "text", "text": ...} parts, tokenized without special tokens) or, as an extension,
// an array of token ids. Its tokens are proposed as drafts (actors/scheduler/proposer.h) and verified like
// any: a prediction changes how fast the answer comes, never the answer.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "http/model_facts.h"

namespace exspec::http {

// The request's prediction as token ids (empty without one); throws ApiError 400 naming the
// field for a malformed one, or one longer than the model's context.
std::vector<int64_t> parse_prediction(const nlohmann::ordered_json& body, const ModelFacts& m);

}  // namespace exspec::http
