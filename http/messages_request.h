// Anthropic Messages request bodies (POST /v1/messages, /v1/messages/count_tokens) rewritten as
// the chat-completions body that means the same, so that they run through parse_chat_request
// (the chat template, tools on the grammar engine, sampling defaults, limits) and the same
// Generation. Every field Anthropic defines that this server cannot honour is a 400 naming it.
// Torch-free.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace exspec::http {

struct MessagesRequest {
  nlohmann::ordered_json chat;              // the chat-completions body
  std::vector<std::string> stop_sequences;  // the client's own (the template's end strings are not)
  bool stream = false;
};

// count_tokens: the fields that shape the prompt only (no max_tokens, no sampling).
MessagesRequest messages_to_chat(const nlohmann::ordered_json& body, bool count_tokens);

}  // namespace exspec::http
