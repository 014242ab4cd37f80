// The chat page served at GET / (http/web/index.html: HTML, CSS and plain JavaScript in one
// file), compiled into the binary by cmake/embed_file.cmake.
#pragma once
#include <string_view>

namespace exspec::http {

std::string_view web_page();

}  // namespace exspec::http
