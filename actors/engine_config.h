// Decoding mode and scheduling parameters (config file "engine" section, CLI flags).
#pragma once
#include <cstdint>
#include <string>

namespace exspec {

enum class Mode { NonSpec, EqSpec, ExSpec };
Mode parse_mode(const std::string& name);  // nonspec | eqspec | exspec
const char* mode_name(Mode m);

struct EngineConfig;
// draft_tokens as configured: "auto" or a number >= 1.
void parse_draft_tokens(const std::string& value, EngineConfig& c);
std::string draft_tokens_name(const EngineConfig& c);
// Throws std::invalid_argument naming the setting that is out of range.
void validate(const EngineConfig& c);

struct EngineConfig {
  Mode mode = Mode::ExSpec;
  int64_t draft_tokens = 3;     // K when fixed
  bool adaptive_k = true;       // draft_tokens "auto": K chosen per step (actors/draft_length.h)
  int64_t min_draft_tokens = 0, max_draft_tokens = 8;  // bounds of auto
  int64_t batch_size = 8;       // B
  int64_t window = 16;          // W (exspec): active sequences batches are formed from; >= B
  bool sort_by_length = false;  // exspec: admit waiting sequences shortest prompt first
  double min_group_fill = 0.5;  // exspec: smallest same-length group worth running, as a share of B
  int64_t max_wait = 8;         // exspec: steps a sequence may wait before it is taken first
};

}  // namespace exspec
