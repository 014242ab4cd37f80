// Small pure helpers where client-supplied text meets the protocol: a Content-Disposition value
// that no file name can break out of, and a key comparison whose time does not depend on where
// the first differing byte is. Torch-free, header-only.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace exspec::http {

// attachment; filename="ASCII fallback"; filename*=UTF-8''percent-encoded (RFC 6266 / 8187).
// The fallback keeps printable ASCII except '"' and '\', each other byte becomes '_'; the
// filename* form carries the exact bytes. CR, LF and NUL can never reach the header.
inline std::string content_disposition(std::string_view filename) {
  static const char* hex = "0123456789ABCDEF";
  std::string plain, encoded;
  for (unsigned char c : filename) {
    plain += (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? static_cast<char>(c) : '_';
    const bool attr_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                           std::string_view("!#$&+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
    if (attr_char) {
      encoded += static_cast<char>(c);
    } else {
      encoded += '%';
      encoded += hex[c >> 4];
      encoded += hex[c & 15];
    }
  }
  return "attachment; filename=\"" + plain + "\"; filename*=UTF-8''" + encoded;
}

// Equal strings, in a time that depends on the lengths only (the API key check).
inline bool constant_time_equal(std::string_view a, std::string_view b) {
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  volatile uint8_t diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t x = i < a.size() ? static_cast<uint8_t>(a[i]) : 0;
    const uint8_t y = i < b.size() ? static_cast<uint8_t>(b[i]) : 0;
    diff = diff | static_cast<uint8_t>(x ^ y);
  }
  return diff == 0;
}

}  // namespace exspec::http
