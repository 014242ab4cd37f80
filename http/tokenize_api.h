// vLLM's tokenizer endpoints, which evaluation harnesses and benchmark clients look up:
// POST /tokenize ({"prompt"} or {"messages"} through the chat template) and POST /detokenize.
#pragma once
#include <string>

#include "http/routes.h"

namespace exspec::http {

// `path` is "/tokenize" or "/detokenize"; `b` the loaded backend. Throws ApiError.
Response tokenize_api(const Backend& b, const Request& req, const std::string& path, bool keep_alive);

}  // namespace exspec::http
