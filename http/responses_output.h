// OpenAI Responses answers (POST /v1/responses) from a chat Generation (http/dialect_output.h):
// the response object {id: "resp_...", object: "response", status (completed, or incomplete when
// max_output_tokens ended it), output items (message with output_text, function_call), usage,
// ...}, or its stream: response.created, response.in_progress, response.output_item.added,
// response.content_part.added, response.output_text.delta / .done, response.content_part.done,
// response.function_call_arguments.delta / .done, response.output_item.done and
// response.completed (response.incomplete), each with its sequence_number. Torch-free.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "http/dialect_output.h"

namespace exspec::http {

// Called with the finished response object (completed or incomplete) and the answer it holds,
// before the client has all of it: the endpoint stores it (store true).
using ResponseDone = std::function<void(const nlohmann::ordered_json& response, const ChatAnswer& answer)>;

// echo: the request's fields the response object repeats (ResponsesRequest::echo, with "store").
std::shared_ptr<GenerationOutput> responses_output(std::weak_ptr<GenerationOutput> to, std::string model,
                                                   nlohmann::ordered_json echo, int64_t input_tokens,
                                                   ResponseDone done = nullptr);

}  // namespace exspec::http
