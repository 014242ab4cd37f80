#include "model/tokenizer/byte_level.h"

#include "model/tokenizer/utf8.h"

namespace exspec::tok {
namespace {

struct Maps {
  std::array<std::string, 256> chars;
  std::array<int16_t, 324> bytes;  // code points 0..323 cover the whole mapping
  Maps() {
    bytes.fill(-1);
    std::array<uint32_t, 256> cp{};
    std::array<bool, 256> direct{};
    for (int b = '!'; b <= '~'; ++b) direct[b] = true;
    for (int b = 0xA1; b <= 0xAC; ++b) direct[b] = true;
    for (int b = 0xAE; b <= 0xFF; ++b) direct[b] = true;
    uint32_t n = 0;
    for (int b = 0; b < 256; ++b) cp[b] = direct[b] ? uint32_t(b) : 256 + n++;
    for (int b = 0; b < 256; ++b) {
      utf8_append(chars[b], cp[b]);
      bytes[cp[b]] = static_cast<int16_t>(b);
    }
  }
};

const Maps& maps() {
  static const Maps m;
  return m;
}

}  // namespace

const std::array<std::string, 256>& byte_level_chars() { return maps().chars; }

int byte_level_byte(uint32_t cp) { return cp < 324 ? maps().bytes[cp] : -1; }

bool byte_level_decode(std::string_view s, std::string& out) {
  const size_t mark = out.size();
  for (size_t i = 0; i < s.size();) {
    const int b = byte_level_byte(utf8_next(s, i));
    if (b < 0) { out.resize(mark); return false; }
    out.push_back(static_cast<char>(b));
  }
  return true;
}

std::string byte_level_encode(std::string_view bytes) {
  const auto& c = maps().chars;
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) out += c[b];
  return out;
}

}  // namespace exspec::tok
