// OpenAI Responses request bodies (POST /v1/responses) rewritten as the chat-completions body that
// means the same, so that they run through parse_chat_request and the same Generation. Every field
// (built-in tools, reasoning, background, ...) that this server cannot honour is a 400 naming it.
// `store` and `previous_response_id` are checked here and served by the endpoint
// (http/front_doors.cpp) over the job store. Torch-free.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "http/api_error.h"

namespace exspec::http {

struct ResponsesRequest {
  nlohmann::ordered_json chat;  // the chat-completions body (messages: the instructions, then the input)
  nlohmann::ordered_json instructions;  // its system message, or null
  nlohmann::ordered_json input;         // the input items as chat messages
  std::optional<bool> store;            // as sent
  std::string previous_response_id;     // as sent, or empty
  // What the response object echoes: instructions, max_output_tokens, metadata, temperature,
  // top_p, tools, tool_choice, parallel_tool_calls, text, user, previous_response_id (and the
  // endpoint adds store: whether it is kept).
  nlohmann::ordered_json echo;
  bool stream = false;
};

ResponsesRequest responses_to_chat(const nlohmann::ordered_json& body);

// chat["messages"] as the instructions, then `history` (a stored conversation that
// previous_response_id continues; its own instructions are not carried over, as OpenAI does),
// then the input.
void continue_from(ResponsesRequest& r, const nlohmann::ordered_json& history);

// An error about the chat body in the Responses fields the client sent: its param (and where
// the message names it) max_tokens as max_output_tokens, response_format as text.format,
// messages as input, tools[i].function.x as tools[i].x.
ApiError responses_error(const ApiError& chat_error);

}  // namespace exspec::http
