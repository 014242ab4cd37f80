// EngineConfigs, policies and requests the tests build again and again (torch-free: the policy
// and the model tests).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "actors/scheduler/draft_length.h"
#include "actors/scheduler/engine_config.h"
#include "model/seq_request.h"

namespace exspec::test {

// A mode with B rows a step, `live` sequences at once (exspec: the window W; inplace: the slots)
// and a fixed K.
inline EngineConfig fixed_k_config(Mode mode, int64_t batch, int64_t live, int64_t k) {
  EngineConfig c;
  c.mode = mode;
  c.batch_size = batch;
  c.window = c.slots = live;
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

// A draft-length policy that always drafts k.
inline std::shared_ptr<DraftLengthPolicy> fixed_k(int64_t k) {
  DraftLengthSettings s;
  s.adaptive = false;
  s.fixed_k = k;
  return std::make_shared<DraftLengthPolicy>(s);
}

// A request whose prompt is `prompt_len` ones (the scheduler tests never look at tokens).
inline SeqRequest ones_request(size_t prompt_len, int64_t max_tokens, std::vector<int64_t> eos = {}) {
  return SeqRequest{std::vector<int64_t>(prompt_len, 1), max_tokens, std::move(eos)};
}

}  // namespace exspec::test
