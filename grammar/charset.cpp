#include "grammar/charset.h"

#include <algorithm>
#include <stdexcept>

namespace exspec::grammar {
namespace {

constexpr uint32_t kSurrogateLo = 0xD800, kSurrogateHi = 0xDFFF;

int encoded_length(uint32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

void encode_into(uint32_t c, uint8_t* out) {
  const int n = encoded_length(c);
  if (n == 1) {
    out[0] = static_cast<uint8_t>(c);
    return;
  }
  static const uint8_t lead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
  for (int k = n - 1; k > 0; --k) {
    out[k] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    c >>= 6;
  }
  out[0] = static_cast<uint8_t>(lead[n] | c);
}

// Splits [lo, hi] until every byte position of the encodings ranges independently, then emits
// one sequence per piece (the classic construction behind RE2's and Rust's UTF-8 ranges).
void split(uint32_t lo, uint32_t hi, std::vector<Utf8Sequence>& out) {
  if (lo > hi) return;
  for (uint32_t edge : {0x7Fu, 0x7FFu, 0xFFFFu}) {
    if (lo <= edge && hi > edge) {
      split(lo, edge, out);
      split(edge + 1, hi, out);
      return;
    }
  }
  const int n = encoded_length(lo);
  for (int i = 1; i < n; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) == (hi & ~m)) continue;
    if ((lo & m) != 0) {
      split(lo, lo | m, out);
      split((lo | m) + 1, hi, out);
      return;
    }
    if ((hi & m) != m) {
      split(lo, (hi & ~m) - 1, out);
      split(hi & ~m, hi, out);
      return;
    }
  }
  Utf8Sequence s;
  s.length = n;
  encode_into(lo, s.lo);
  encode_into(hi, s.hi);
  out.push_back(s);
}

}  // namespace

CharSet CharSet::range(uint32_t lo, uint32_t hi) {
  CharSet s;
  s.add(lo, hi);
  return s;
}

CharSet CharSet::any() { return range(0, kMaxCodePoint); }

void CharSet::add(uint32_t lo, uint32_t hi) {
  hi = std::min(hi, kMaxCodePoint);
  if (lo > hi) return;
  if (lo <= kSurrogateHi && hi >= kSurrogateLo) {  // leave the surrogates out
    if (lo < kSurrogateLo) add(lo, kSurrogateLo - 1);
    if (hi > kSurrogateHi) add(kSurrogateHi + 1, hi);
    return;
  }
  std::vector<CodeRange> merged;
  merged.reserve(ranges_.size() + 1);
  CodeRange cur{lo, hi};
  bool placed = false;
  for (const CodeRange& r : ranges_) {
    if (r.hi + 1 < cur.lo) {
      merged.push_back(r);
    } else if (cur.hi + 1 < r.lo) {
      if (!placed) merged.push_back(cur), placed = true;
      merged.push_back(r);
    } else {
      cur.lo = std::min(cur.lo, r.lo);
      cur.hi = std::max(cur.hi, r.hi);
    }
  }
  if (!placed) merged.push_back(cur);
  ranges_ = std::move(merged);
  // Ranges on both sides of the surrogate gap stay apart: they are not adjacent code points.
}

void CharSet::add(const CharSet& other) {
  for (const CodeRange& r : other.ranges_) add(r.lo, r.hi);
}

CharSet CharSet::complement() const {
  CharSet out;
  uint32_t next = 0;
  for (const CodeRange& r : ranges_) {
    if (r.lo > next) out.add(next, r.lo - 1);
    next = r.hi + 1;
  }
  if (next <= kMaxCodePoint) out.add(next, kMaxCodePoint);
  return out;
}

CharSet CharSet::minus(const CharSet& other) const {
  CharSet keep = other.complement(), out;
  for (const CodeRange& a : ranges_)
    for (const CodeRange& b : keep.ranges_) {
      const uint32_t lo = std::max(a.lo, b.lo), hi = std::min(a.hi, b.hi);
      if (lo <= hi) out.add(lo, hi);
    }
  return out;
}

bool CharSet::contains(uint32_t c) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), c, [](uint32_t v, const CodeRange& r) { return v < r.lo; });
  return it != ranges_.begin() && std::prev(it)->hi >= c;
}

bool CharSet::operator==(const CharSet& o) const {
  if (ranges_.size() != o.ranges_.size()) return false;
  for (size_t i = 0; i < ranges_.size(); ++i)
    if (ranges_[i].lo != o.ranges_[i].lo || ranges_[i].hi != o.ranges_[i].hi) return false;
  return true;
}

std::vector<Utf8Sequence> utf8_sequences(const CharSet& set) {
  std::vector<Utf8Sequence> out;
  for (const CodeRange& r : set.ranges()) split(r.lo, r.hi, out);
  return out;
}

std::string utf8_encode(uint32_t c) {
  uint8_t b[4];
  encode_into(c, b);
  return std::string(reinterpret_cast<const char*>(b), static_cast<size_t>(encoded_length(c)));
}

uint32_t utf8_next(const std::string& s, size_t& i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  int n = b0 < 0x80 ? 1 : (b0 & 0xE0) == 0xC0 ? 2 : (b0 & 0xF0) == 0xE0 ? 3 : (b0 & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || i + static_cast<size_t>(n) > s.size()) throw std::invalid_argument("ill-formed UTF-8");
  uint32_t c = n == 1 ? b0 : b0 & (0x7F >> n);
  for (int k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) throw std::invalid_argument("ill-formed UTF-8");
    c = (c << 6) | (byte(i + k) & 0x3F);
  }
  if (encoded_length(c) != n || c > kMaxCodePoint || (c >= kSurrogateLo && c <= kSurrogateHi))
    throw std::invalid_argument("ill-formed UTF-8");
  i += static_cast<size_t>(n);
  return c;
}

bool utf8_at(std::string_view s, size_t& i, uint32_t& c) {
  const std::string rest(s.substr(i, 4));
  size_t k = 0;
  try {
    c = utf8_next(rest, k);
  } catch (const std::invalid_argument&) {
    return false;
  }
  i += k;
  return true;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace exspec::grammar
