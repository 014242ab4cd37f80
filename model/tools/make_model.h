// Writes Hugging Face format checkpoints with seeded weights (no downloads anywhere), and
// drafts derived from them, so that tests, the demo and the benchmarks have model pairs.
#pragma once
#include <cstdint>
#include <string>

#include "model/model_config.h"

namespace exspec {

struct MakeModelOptions {
  std::string arch = "llama";  // llama | qwen2 | qwen3 | glm | glm4 | mistral
  std::string preset = "tiny"; // tiny | small | kquant | demo | 1b | 150m
  uint64_t seed = 0;
  std::string out;
  std::string dtype = "float32";  // storage dtype: float32 | float64 | float16 | bfloat16
  int shards = 1;                 // > 1 writes model-0000i-of-0000n.safetensors + index
  bool attention_bias = false;    // llama/qwen3: biases on q/k/v/o (qwen2 always has q/k/v biases)
  // phi3: longrope scaling as Phi-3.5 and Phi-4-mini have it (with_longrope).
  bool longrope = false;
  // Residual shaping: layers >= damp_from get o_proj/down_proj drawn with damp_std, so the
  // first layers dominate and a draft made of them agrees with the target often.
  int64_t damp_from = 1;
  double init_std = 0.02;
  double damp_std = -1;  // < 0: the preset's (demo, 1b 0.0003; else 0.0005: docs/models.md gives their acceptance)
};

// The config a preset gives for an architecture (exposed for tests).
ModelConfig preset_config(const std::string& arch, const std::string& preset);
// c with Phi-3.5's kind of longrope: the original context a quarter of the whole, short factors
// just above 1, long ones rising geometrically to the context's ratio. phi3 only.
ModelConfig with_longrope(ModelConfig c);

void make_model(const MakeModelOptions& opts);

// A draft made of the target's first `layers` layers with the same embeddings, final norm,
// head and tokenizer files.
void make_draft(const std::string& target_dir, int64_t layers, const std::string& out_dir);

// The byte-level tokenizer files of a generated model (256 byte tokens, then <s>, </s>; GLM
// models then GLM-4's chat tokens [gMASK] <sop> <|system|> <|user|> <|assistant|> <|observation|>
// and GLM-4's chat template).
void write_byte_tokenizer(const std::string& dir, int64_t max_length, bool glm = false);

}  // namespace exspec
