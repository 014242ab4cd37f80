// Client JSON text (batch input lines here, request bodies through http/json_body.h) as
// ordered_json: objects keep the client's key order (nlohmann's json sorts keys), so that a JSON
// schema's properties and a tool's parameters reach the grammar and the chat template in it, as
// Python's json.loads keeps them. Any text the parser rejects, numbers beyond double's range and
// nesting deeper than kMaxJsonDepth included, ends in a JsonBodyError that names where parsing
// stopped ("max_tokens", "messages[0].content"). Torch-free.
#pragma once
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace exspec::jobs {

inline constexpr int kMaxJsonDepth = 64;  // deeper values would recurse in copies and dumps

struct JsonBodyError : std::runtime_error {
  JsonBodyError(const std::string& message, std::string path) : std::runtime_error(message), path(std::move(path)) {}
  std::string path;  // where parsing stopped; empty at the top level
};

// Throws JsonBodyError.
nlohmann::ordered_json parse_json_text(const std::string& text);

}  // namespace exspec::jobs
