// The other APIs' front doors, over the chat-completions path: Anthropic's POST /v1/messages and
// /v1/messages/count_tokens, OpenAI's POST /v1/responses. Each rewrites its request as the chat
// completion that means the same (http/messages_request.h, http/responses_request.h), parses it
// as /v1/chat/completions does (the chat template, tools and grammars, sampling defaults,
// limits), runs one Generation as it does (speculation, cancellation, metrics) and answers
// through its own writer (http/messages_output.h, http/responses_output.h). Responses are kept in
// the job store when asked (store, on by default where the server has one): GET and DELETE
// /v1/responses/{id}, and previous_response_id continues a kept conversation.
#pragma once
#include "http/call.h"

namespace exspec::http {

void create_message(const Call& c, Routed& r);
void count_message_tokens(const Call& c, Routed& r);  // {"input_tokens": N}: the rendered prompt's
void create_response(const Call& c, Routed& r);
Response get_stored_response(const Call& c);     // c.params: {id}
Response delete_stored_response(const Call& c);  // c.params: {id}

}  // namespace exspec::http
