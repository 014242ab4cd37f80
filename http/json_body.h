// The one place client JSON is parsed (request bodies, batch input lines): any text the parser
// rejects, numbers beyond double's range and nesting deeper than kMaxJsonDepth included, ends in
// a JsonBodyError that names where parsing stopped ("max_tokens", "messages[0].content"), which
// the callers turn into a 400 naming that field. Torch-free.
#pragma once
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "http/api_error.h"

namespace exspec::http {

inline constexpr int kMaxJsonDepth = 64;  // deeper values would recurse in copies and dumps

struct JsonBodyError : std::runtime_error {
  JsonBodyError(const std::string& message, std::string path) : std::runtime_error(message), path(std::move(path)) {}
  std::string path;  // where parsing stopped; empty at the top level
};

// body[name], or null when it is absent or JSON null (OpenAI treats both as "not given").
inline const nlohmann::json* field(const nlohmann::json& body, const char* name) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

// Throws JsonBodyError.
nlohmann::json parse_json_text(const std::string& text);

// parse_json_text for a request body: the error is a 400 "invalid_json" whose param is the path.
nlohmann::json parse_json_body(const std::string& body);

// A 400 for a nlohmann type or range error met while reading an already parsed body (a value of
// an unexpected type deep inside): the request is wrong, not the server.
ApiError json_value_error(const std::exception& e);

}  // namespace exspec::http
