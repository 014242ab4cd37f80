// vLLM's tokenizer endpoints, which evaluation harnesses and benchmark clients look up:
// POST /tokenize ({"prompt"} or {"messages"} through the chat template) and POST /detokenize.
// The route table (http/routes.cpp) calls them; they throw ApiError.
#pragma once
#include "http/call.h"

namespace exspec::http {

Response tokenize_request(const Call& c);
Response detokenize_request(const Call& c);

}  // namespace exspec::http
