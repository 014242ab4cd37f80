// tokenizer.json "normalizer": Sequence, NFC, NFD, Prepend, Replace, Strip.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/tokenizer/regex_split.h"

namespace exspec::tok {

class Normalizer {
 public:
  // Throws std::runtime_error naming an unsupported type or a bad field. Returns nullptr for
  // a JSON null.
  static std::unique_ptr<Normalizer> from_json(const nlohmann::json& j);
  // s is valid UTF-8; so is the result.
  std::string normalize(std::string_view s) const;

 private:
  enum class Kind { kNfc, kNfd, kPrepend, kReplace, kStrip };
  struct Step {
    Kind kind;
    std::string text;  // Prepend: the prefix; Replace: the replacement
    Pattern pattern;   // Replace
    bool left = false, right = false;  // Strip
  };
  static void add_steps(const nlohmann::json& j, std::vector<Step>& steps);
  std::vector<Step> steps_;
};

}  // namespace exspec::tok
