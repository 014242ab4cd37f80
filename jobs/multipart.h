// A small multipart/form-data parser (RFC 7578) for POST /v1/files: the parts' names, filenames
// and bodies. Boost.Beast has none, and the uploads are whole request bodies already in memory.
// Torch-free.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exspec::jobs {

struct FormPart {
  std::string name, filename, content_type;
  std::string_view data;  // points into the body given to parse_multipart
};

// The boundary from a Content-Type header value, or nullopt when it is not multipart/form-data.
std::optional<std::string> multipart_boundary(std::string_view content_type);

// Splits `body`. Throws std::invalid_argument saying what is malformed.
std::vector<FormPart> parse_multipart(std::string_view body, const std::string& boundary);

}  // namespace exspec::jobs
