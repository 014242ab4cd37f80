// UTF-8 helpers shared by the tokenizer: validation, lossy decoding with the "maximal subpart"
// replacement rule (as WHATWG TextDecoder and Rust's from_utf8_lossy), and streaming support.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace exspec::tok {

enum class Utf8Status { kValid, kInvalid, kIncomplete };

// Examines the sequence starting at s[0]. Returns the number of bytes it covers:
//  kValid      -> one well-formed character of that many bytes;
//  kInvalid    -> a maximal ill-formed subpart (>= 1 byte) that decodes to one U+FFFD;
//  kIncomplete -> all n bytes are a well-formed but truncated prefix (more input may complete it).
size_t utf8_sequence(const unsigned char* s, size_t n, Utf8Status& status);

bool utf8_is_valid(std::string_view s);

// Appends s to out, replacing every maximal ill-formed subpart (including a truncated tail)
// with U+FFFD.
void utf8_append_lossy(std::string& out, std::string_view s);
inline std::string utf8_lossy(std::string_view s) {
  std::string out;
  utf8_append_lossy(out, s);
  return out;
}

// Length of the longest prefix of s that cannot change meaning when more bytes are appended:
// everything except a trailing kIncomplete sequence.
size_t utf8_stable_prefix(std::string_view s);

void utf8_append(std::string& out, uint32_t cp);

// Decodes the character at s[i] of a VALID string and advances i.
inline uint32_t utf8_next(std::string_view s, size_t& i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + i;
  uint32_t c = p[0];
  if (c < 0x80) { i += 1; return c; }
  if (c < 0xE0) { i += 2; return ((c & 0x1F) << 6) | (p[1] & 0x3F); }
  if (c < 0xF0) { i += 3; return ((c & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F); }
  i += 4;
  return ((c & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F);
}

inline size_t utf8_char_len(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

// Unicode White_Space property (what Rust's char::is_whitespace tests).
bool is_unicode_whitespace(uint32_t cp);

}  // namespace exspec::tok
