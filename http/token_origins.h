// Where a streamed choice's tokens came from, for stream_options.include_origin (our extension,
// docs/serving.md): the engine's origin of each token (accepted draft, the target's own token,
// forced by a grammar) paired with the token's text as the choice counts it, handed out with the
// next chunk; and, with the last chunk, the choice's speculation figures. The chat page at GET /
// shades tokens by it. Torch-free.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/sink.h"

namespace exspec::http {

class OriginTrail {
 public:
  // The engine's origins of the next tokens it sends, and its steps' K.
  void received(const TokenOrigins& o);
  // The `index`-th token received (0: the first) counts, with its text (empty while a character's
  // bytes are incomplete, or when the text hides it).
  void counted(size_t index, int64_t id, const std::string& piece);
  // The text the decoder held back at the end (a character's incomplete bytes, as U+FFFD): the
  // last token's.
  void flushed(const std::string& rest);
  // The tokens counted since the last call: [{"id", "text", "origin"}]. The last one waits for
  // the next call unless `last` (the choice's last chunk): the decoder may still hold bytes of its
  // text, which flushed() adds at the end.
  nlohmann::ordered_json take(bool last);
  // {"tokens", "drafted", "accepted", "steps", "k_mean", "k_min", "k_max", "by_origin": {name: n}}
  nlohmann::ordered_json summary(int64_t drafted, int64_t accepted) const;

 private:
  std::vector<TokenOrigin> origins_;  // as received, one per token
  nlohmann::ordered_json pending_ = nlohmann::ordered_json::array();
  int64_t counted_ = 0, steps_ = 0, k_sum_ = 0, k_min_ = 0, k_max_ = 0;
  std::array<int64_t, 5> by_origin_{};
};

}  // namespace exspec::http
