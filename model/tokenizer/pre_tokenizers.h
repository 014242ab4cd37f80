// tokenizer.json "pre_tokenizer": Sequence, Split, ByteLevel, Metaspace, Digits, Whitespace,
// WhitespaceSplit. Splits one normalized section into the words BPE runs on.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/tokenizer/regex_split.h"

namespace exspec::tok {

class PreTokenizer {
 public:
  // nullptr for JSON null; throws std::runtime_error naming an unsupported type or bad field.
  static std::unique_ptr<PreTokenizer> from_json(const nlohmann::json& j);

  // Appends the words of s to `words`. Views point into s or into strings added to `arena`.
  // at_start: s begins at offset 0 of the user's text (Metaspace prepend_scheme "first").
  void split(std::string_view s, bool at_start, std::vector<std::string_view>& words,
             std::deque<std::string>& arena) const;

  // True when a ByteLevel step is present: words are then raw bytes for a byte-level vocab.
  bool byte_level() const { return byte_level_; }

 private:
  enum class Kind { kSplit, kByteLevel, kMetaspace };
  struct Step {
    Kind kind;
    Pattern pattern;  // kSplit; kByteLevel with use_regex
    SplitBehavior behavior = SplitBehavior::kIsolated;
    bool invert = false;
    bool use_pattern = false;
    bool add_prefix_space = false;  // ByteLevel
    std::string replacement;        // Metaspace
    int prepend = 0;                // Metaspace: 0 never, 1 first, 2 always
    bool split = true;              // Metaspace
  };
  void add_steps(const nlohmann::json& j);
  std::vector<Step> steps_;
  bool byte_level_ = false;
};

}  // namespace exspec::tok
