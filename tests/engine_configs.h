// EngineConfigs the tests build again and again (torch-free: the policy and the model tests).
#pragma once
#include <cstdint>

#include "actors/engine_config.h"

namespace exspec::test {

// A mode with B rows a step, W (exspec: the window; inplace: the slots) and a fixed K.
inline EngineConfig fixed_k_config(Mode mode, int64_t batch, int64_t window, int64_t k) {
  EngineConfig c;
  c.mode = mode;
  c.batch_size = batch;
  c.window = window;
  c.adaptive_k = false;
  c.draft_tokens = k;
  return c;
}

// In place, with prompts stored `chunk` tokens a forward.
inline EngineConfig inplace_config(int64_t batch, int64_t slots, int64_t k, int64_t chunk) {
  EngineConfig c = fixed_k_config(Mode::InPlace, batch, slots, k);
  c.prefill_chunk = chunk;
  return c;
}

}  // namespace exspec::test
