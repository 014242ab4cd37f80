// Request bodies as ordered_json (jobs/json_text.h parses them, as it parses batch input lines):
// every error ends in a 400 naming the field where parsing stopped or the value that is wrong.
// Torch-free.
#pragma once
#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

#include "http/api_error.h"
#include "jobs/json_text.h"

namespace exspec::http {

// The parser itself is jobs/json_text.h's (batch input lines, the lower of its two users, parse with it).
using jobs::JsonBodyError;
using jobs::kMaxJsonDepth;
using jobs::parse_json_text;

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

// parse_json_text for a request body: the error is a 400 "invalid_json" whose param is the path.
nlohmann::ordered_json parse_json_body(const std::string& body);

// A 400 for a nlohmann type or range error met while reading an already parsed body (a value of
// an unexpected type deep inside): the request is wrong, not the server.
ApiError json_value_error(const std::exception& e);

}  // namespace exspec::http
