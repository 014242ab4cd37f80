// tokenizer.json "decoder" as a streaming pipeline: per-token steps (Replace, Metaspace,
// ByteFallback, ByteLevel), then Fuse, then Strip over the whole text. Output is released only
// as complete UTF-8; ill-formed bytes become U+FFFD (maximal subparts), so feeding tokens one by
// one yields exactly the text of feeding them all at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/tokenizer/regex_split.h"

namespace exspec::tok {

class DecoderPipeline {
 public:
  struct State {
    size_t tokens = 0;       // tokens pushed so far
    std::string pending;     // bytes not yet released (an incomplete UTF-8 tail)
    size_t strip_left = 0;   // leading Strip characters still to remove
    bool started = false;    // Strip: the first non-stripped character was released
    std::string held;        // trailing Strip characters held back
  };

  // decoder JSON (null: tokens are joined with spaces). vocab_raw_bytes: model tokens are stored
  // as raw bytes (byte-level vocabulary). Throws std::runtime_error on unsupported decoders.
  static DecoderPipeline from_json(const nlohmann::json& j, bool vocab_raw_bytes);

  State start() const {
    State s;
    s.strip_left = strip_start_;
    return s;
  }
  void push(State& st, std::string_view token, bool added, std::string& out) const;
  void flush(State& st, std::string& out) const;

 private:
  enum class Kind { kReplace, kMetaspace, kByteFallback, kByteLevel };
  struct Step {
    Kind kind;
    Pattern pattern;      // Replace
    std::string content;  // Replace: replacement; Metaspace: the replacement character
    bool strip_first = false;  // Metaspace: drop the leading space of the first token
  };
  void add(const nlohmann::json& j, bool& fused);
  void release(State& st, std::string& text, std::string& out) const;

  std::vector<Step> steps_;
  bool none_ = false;  // no decoder: join with " "
  bool raw_bytes_ = false;
  bool strip_ = false;
  std::string strip_content_;
  size_t strip_start_ = 0, strip_stop_ = 0;
};

}  // namespace exspec::tok
