// GPT-2's reversible byte <-> printable-character mapping (bytes_to_unicode).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace exspec::tok {

// UTF-8 encoding of the character that stands for byte b.
const std::array<std::string, 256>& byte_level_chars();

// Byte for a mapped character, or -1 when cp is not one of the 256 characters.
int byte_level_byte(uint32_t cp);

// Converts a byte-level token ("Ġhello") to its raw bytes (" hello"). False (out untouched
// beyond what was appended) when a character is not in the mapping; s must be valid UTF-8.
bool byte_level_decode(std::string_view s, std::string& out);

// The inverse: raw bytes to the byte-level alphabet.
std::string byte_level_encode(std::string_view bytes);

}  // namespace exspec::tok
