// `exspec check`: incremental decoding against the full forward, on any checkpoint. Each path
// decodes the prompts greedily the way a serving path does (a KV cache, padding, slots, chunks,
// verification-shaped forwards); then one forward over the whole sequence, with no cache, must
// pick every token the path picked. The full forward itself is what the reference tests compare
// with Hugging Face's definitions, so a path that agrees with it agrees with the model.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace exspec {

class Decoder;

// One path's run over every prompt: `fed[i]` are the tokens given to the model after prompt i,
// `predicted[i][j]` the greedy choice at the position after fed[i][j - 1] (the prompt's last
// token for j = 0). Incremental decoding feeds what it predicts; a verification-shaped path feeds
// another path's tokens as its drafts.
struct PathRun {
  std::string name;
  std::vector<std::vector<int64_t>> fed, predicted;
};

// The first token where a path and the full forward disagree.
struct Divergence {
  size_t prompt = 0;
  int64_t token = 0;     // index among the generated tokens
  int64_t position = 0;  // where that token sits in the sequence: prompt length + token
  int64_t path_id = 0, full_id = 0;
  double margin = 0;  // the full forward's top-1 minus top-2 logit there
  double gap = 0;     // the full forward's logit of its choice minus that of the path's
};

struct ConsistencyOptions {
  int64_t max_tokens = 24;   // tokens per prompt (EOS does not stop: every position is checked)
  int64_t chunk = 3;         // prompt tokens per prefill forward on the chunked paths
  int64_t verify_width = 4;  // positions per verification-shaped forward (a pending token + 3 drafts)
};

// The paths, in the order they are checked. Each is a few dozen lines below in consistency.cpp.
std::vector<PathRun> run_paths(const Decoder& model, const std::vector<std::vector<int64_t>>& prompts,
                               const ConsistencyOptions& opts);

// One forward over prompt + fed for every prompt (batch 1, no cache); the first token whose
// prediction differs from the full forward's argmax, or nothing when all agree.
std::optional<Divergence> first_divergence(const Decoder& model, const std::vector<std::vector<int64_t>>& prompts,
                                           const PathRun& run);

}  // namespace exspec
