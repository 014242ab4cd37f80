// OpenAI Responses answers (POST /v1/responses) from a chat Generation (http/dialect_output.h):
// the response object {id: "resp_...", object: "response", status (completed, or incomplete when
// max_output_tokens ended it), output items (message with output_text, function_call), usage,
// ...}, or its stream: response.created, response.in_progress, response.output_item.added,
// response.content_part.added, response.output_text.delta / .done, response.content_part.done,
// response.function_call_arguments.delta / .done, response.output_item.done and
// response.completed (response.incomplete), each with its sequence_number. Torch-free.
#pragma once
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "http/generation.h"

namespace exspec::http {

// echo: the request's fields the response object repeats (ResponsesRequest::echo).
std::shared_ptr<GenerationOutput> responses_output(std::weak_ptr<GenerationOutput> to, std::string model,
                                                   nlohmann::ordered_json echo, int64_t input_tokens);

}  // namespace exspec::http
