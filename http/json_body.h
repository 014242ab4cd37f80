// The one place client JSON is parsed (request bodies, batch input lines), as ordered_json: objects
// keep the client's key order (nlohmann's json sorts keys), so that a JSON schema's properties and a
// tool's parameters reach the grammar and the chat template in it, as Python's json.loads keeps
// them. Any text the parser rejects, numbers beyond double's range and nesting deeper than
// kMaxJsonDepth included, ends in a JsonBodyError that names where parsing stopped ("max_tokens",
// "messages[0].content"), which the callers turn into a 400 naming that field. Torch-free.
#pragma once
#include <stdexcept>
#include <initializer_list>
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
inline const nlohmann::ordered_json* field(const nlohmann::ordered_json& body, const char* name) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

// Every key of obj is one of `known`; else a 400 naming at.key ("unknown_parameter").
void only_fields(const nlohmann::ordered_json& obj, const std::string& at, std::initializer_list<const char*> known);

// obj[key], which must be present and of the kind `is` checks; else a 400 naming at.key.
const nlohmann::ordered_json& need_field(const nlohmann::ordered_json& obj, const char* key, const std::string& at,
                                         bool (nlohmann::ordered_json::*is)() const noexcept, const char* what);

// Throws JsonBodyError.
nlohmann::ordered_json parse_json_text(const std::string& text);

// parse_json_text for a request body: the error is a 400 "invalid_json" whose param is the path.
nlohmann::ordered_json parse_json_body(const std::string& body);

// A 400 for a nlohmann type or range error met while reading an already parsed body (a value of
// an unexpected type deep inside): the request is wrong, not the server.
ApiError json_value_error(const std::exception& e);

}  // namespace exspec::http
