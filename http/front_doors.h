// The other APIs' front doors, over the chat-completions path: Anthropic's POST /v1/messages and
// /v1/messages/count_tokens, OpenAI's POST /v1/responses. Each rewrites its request as the chat
// completion that means the same (http/messages_request.h, http/responses_request.h), parses it
// as /v1/chat/completions does (the chat template, tools and grammars, sampling defaults,
// limits), runs one Generation as it does (speculation, cancellation, metrics) and answers
// through its own writer (http/messages_output.h, http/responses_output.h).
#pragma once
#include "http/call.h"

namespace exspec::http {

void create_message(const Call& c, Routed& r);
void count_message_tokens(const Call& c, Routed& r);  // {"input_tokens": N}: the rendered prompt's
void create_response(const Call& c, Routed& r);

}  // namespace exspec::http
