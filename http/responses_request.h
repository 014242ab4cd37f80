// OpenAI Responses request bodies (POST /v1/responses) rewritten as the chat-completions body that
// means the same, so that they run through parse_chat_request and the same Generation. Stateless:
// `store` true and `previous_response_id` are refused, as is every field (built-in tools,
// reasoning, background, ...) that this server cannot honour: a 400 naming it. Torch-free.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "http/api_error.h"

namespace exspec::http {

struct ResponsesRequest {
  nlohmann::ordered_json chat;  // the chat-completions body
  // What the response object echoes: instructions, max_output_tokens, metadata, temperature,
  // top_p, tools, tool_choice, parallel_tool_calls, text, user.
  nlohmann::ordered_json echo;
  bool stream = false;
};

ResponsesRequest responses_to_chat(const nlohmann::ordered_json& body);

// An error about the chat body in the Responses fields the client sent: its param (and where
// the message names it) max_tokens as max_output_tokens, response_format as text.format,
// messages as input, tools[i].function.x as tools[i].x.
ApiError responses_error(const ApiError& chat_error);

}  // namespace exspec::http
