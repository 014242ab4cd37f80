// Decoding mode and scheduling parameters (config file "engine" section, CLI flags).
#pragma once
#include <cstdint>
#include <string>

namespace exspec {

enum class Mode { NonSpec, EqSpec, ExSpec };
Mode parse_mode(const std::string& name);  // nonspec | eqspec | exspec
const char* mode_name(Mode m);

struct EngineConfig {
  Mode mode = Mode::ExSpec;
  int64_t draft_tokens = 3;     // K
  int64_t batch_size = 8;       // B
  int64_t window = 16;          // W (exspec): active sequences batches are formed from; >= B
  bool sort_by_length = false;  // exspec: admit waiting sequences shortest prompt first
  double min_group_fill = 0.5;  // exspec: smallest same-length group worth running, as a share of B
  int64_t max_wait = 8;         // exspec: steps a sequence may wait before it is taken first
};

}  // namespace exspec
