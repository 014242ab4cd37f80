#include "model/tokenizer/utf8.h"

namespace exspec::tok {

size_t utf8_sequence(const unsigned char* s, size_t n, Utf8Status& status) {
  const unsigned char c = s[0];
  if (c < 0x80) { status = Utf8Status::kValid; return 1; }
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    status = Utf8Status::kInvalid;
    return 1;
  }
  for (size_t k = 1; k < len; ++k) {
    if (k >= n) { status = Utf8Status::kIncomplete; return n; }
    const unsigned char b = s[k];
    const bool ok = (k == 1) ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) { status = Utf8Status::kInvalid; return k; }
  }
  status = Utf8Status::kValid;
  return len;
}

bool utf8_is_valid(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time.
    while (i + 8 <= n) {
      uint64_t w;
      __builtin_memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    if (p[i] < 0x80) { ++i; continue; }
    Utf8Status st;
    const size_t k = utf8_sequence(p + i, n - i, st);
    if (st != Utf8Status::kValid) return false;
    i += k;
  }
  return true;
}

void utf8_append_lossy(std::string& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0, run = 0;  // [run, i) is valid text not yet copied
  while (i < n) {
    if (p[i] < 0x80) { ++i; continue; }
    Utf8Status st;
    const size_t k = utf8_sequence(p + i, n - i, st);
    if (st == Utf8Status::kValid) { i += k; continue; }
    out.append(s.data() + run, i - run);
    out.append("\xEF\xBF\xBD");
    i += k;
    run = i;
  }
  out.append(s.data() + run, n - run);
}

size_t utf8_stable_prefix(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  // Only the last (up to) 3 bytes can form an incomplete sequence: find the last lead byte.
  size_t start = n;
  for (size_t back = 1; back <= 4 && back <= n; ++back) {
    const unsigned char b = p[n - back];
    if ((b & 0xC0) != 0x80) { start = n - back; break; }
  }
  if (start == n) return n;
  Utf8Status st;
  utf8_sequence(p + start, n - start, st);
  return st == Utf8Status::kIncomplete ? start : n;
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool is_unicode_whitespace(uint32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

}  // namespace exspec::tok
