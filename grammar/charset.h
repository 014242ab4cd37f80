// Sets of Unicode scalar values (U+0000..U+10FFFF without the surrogates), as sorted ranges, and
// their UTF-8 encodings as byte-range sequences: how a character class of a regular expression
// or a grammar becomes byte transitions.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace exspec::grammar {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

struct CodeRange {
  uint32_t lo, hi;  // inclusive
};

class CharSet {
 public:
  CharSet() = default;
  static CharSet range(uint32_t lo, uint32_t hi);
  static CharSet single(uint32_t c) { return range(c, c); }
  static CharSet any();  // every scalar value

  void add(uint32_t lo, uint32_t hi);  // surrogates in [lo, hi] are left out
  void add(const CharSet& other);
  CharSet complement() const;  // within any()
  CharSet minus(const CharSet& other) const;
  bool empty() const { return ranges_.empty(); }
  bool contains(uint32_t c) const;
  const std::vector<CodeRange>& ranges() const { return ranges_; }
  bool operator==(const CharSet& o) const;

 private:
  std::vector<CodeRange> ranges_;  // sorted, disjoint, not adjacent
};

// One UTF-8 encoding pattern: byte k of the encoding lies in [lo[k], hi[k]].
struct Utf8Sequence {
  int length = 0;
  uint8_t lo[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0};
};

// The encodings of a set as byte-range sequences; each byte string of the set's encodings matches
// exactly one sequence.
std::vector<Utf8Sequence> utf8_sequences(const CharSet& set);

// UTF-8 of one scalar value.
std::string utf8_encode(uint32_t c);

// Decodes the scalar value at s[i] and advances i; throws std::invalid_argument on ill-formed UTF-8.
uint32_t utf8_next(const std::string& s, size_t& i);
// The same for the parsers: false (i unchanged) on ill-formed UTF-8.
bool utf8_at(std::string_view s, size_t& i, uint32_t& c);
// 0..15 for a hexadecimal digit, -1 otherwise.
int hex_digit(char c);

}  // namespace exspec::grammar
