// Patterns (literal strings or PCRE2 regexes in UTF + Unicode-property mode, JIT-compiled) and
// the Hugging Face "split with delimiter behavior" operation used by Split / Metaspace / Digits.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace exspec::tok {

class Regex {
 public:
  // Throws std::runtime_error naming the pattern and PCRE2's message when it does not compile.
  explicit Regex(const std::string& pattern);
  // First non-empty-or-empty match starting at or after `start` (subject must be valid UTF-8).
  bool find(std::string_view subject, size_t start, size_t& begin, size_t& end) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::shared_ptr<void> code_;  // pcre2_code_8
  bool jit_ = false;
};

// A pattern of tokenizer.json: {"String": "..."} or {"Regex": "..."}.
struct Pattern {
  std::string literal;
  std::shared_ptr<const Regex> regex;  // set for Regex patterns
  bool find(std::string_view s, size_t start, size_t& begin, size_t& end) const;
};

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// Appends to out the pieces of s (views into s) produced by splitting on the pattern's
// non-empty matches with the given behavior; invert swaps the roles of matches and gaps.
void split_pieces(std::string_view s, const Pattern& p, SplitBehavior behavior, bool invert,
                  std::vector<std::string_view>& out);

// Replaces every non-empty match of p in s by content.
std::string replace_all(std::string_view s, const Pattern& p, std::string_view content);

}  // namespace exspec::tok
