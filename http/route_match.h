// A request target against the route table's patterns ("/v1/files/{id}/content"). Boost.URL
// splits the target, in origin form or absolute form, into its path's segments and its query's
// parameters, both percent-decoded. Torch-free and Beast-free, for the unit tests.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace exspec::http {

struct Target {
  std::string path;                   // as sent (for messages)
  std::vector<std::string> segments;  // the path's, decoded
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order

  // The first value of a query parameter; "" when absent or given without a value.
  std::string param(const std::string& key) const;
};

// Null for what is neither origin form ("/v1/models?x=1") nor absolute form ("http://h/v1/models"),
// e.g. "*".
std::optional<Target> parse_target(const std::string& target);

// Whether `pattern`'s segments match: a literal matches itself, "{name}" one non-empty segment,
// a last "{name...}" the rest of the path (joined with "/"). The {names}' values go to `params`.
bool match_pattern(const std::string& pattern, const std::vector<std::string>& segments, std::vector<std::string>& params);

// The pattern as clients and /metrics see it: "{id...}" written "{id}".
std::string pattern_label(const std::string& pattern);

}  // namespace exspec::http
