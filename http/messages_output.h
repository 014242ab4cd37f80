// Anthropic Messages answers (POST /v1/messages) from a chat Generation (http/dialect_output.h):
// the message object {id: "msg_...", type, role, model, content blocks (text, tool_use),
// stop_reason (end_turn, max_tokens, stop_sequence, tool_use), stop_sequence, usage}, or its
// named stream events: message_start, ping, content_block_start / _delta (text_delta,
// input_json_delta) / _stop, message_delta (stop_reason, usage) and message_stop; errors in
// Anthropic's shape. Torch-free.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "http/generation.h"

namespace exspec::http {

// stop_sequences: the client's own, for stop_reason "stop_sequence" (the chat template's end
// strings end a turn: "end_turn").
std::shared_ptr<GenerationOutput> messages_output(std::weak_ptr<GenerationOutput> to, std::string model,
                                                  int64_t input_tokens, std::vector<std::string> stop_sequences);

// A chat tool call id ("call_...") as an Anthropic tool_use id ("toolu_...").
std::string tool_use_id(const std::string& call_id);

}  // namespace exspec::http
