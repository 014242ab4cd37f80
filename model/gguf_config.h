// A GGUF file's model as our ModelConfig and Hugging Face weight names. Torch-free.
//
// llama.cpp's converter renames Hugging Face's tensors (model.layers.N.self_attn.q_proj.weight ->
// blk.N.attn_q.weight, ...), permutes llama's q and k rows for its own rope layout, and turns a
// llama3 rope scaling into per-frequency factors (the rope_freqs tensor). This undoes the first
// two and serves the third as the factors it is (RopeScaling "factors", as llama.cpp does).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "model/model_config.h"

namespace exspec::gguf {

// The shortest decimal that reads back as this float32 (the converter stored config.json's
// doubles, 1e-06 or 0.95, as float32): the double back wherever it had at most 9 digits.
double shortest_decimal(double f32_value);

// llama, qwen2 and qwen3 (general.architecture); anything else is refused naming it. Throws
// naming the file and the key or tensor that is missing or inconsistent.
ModelConfig config_from_gguf(const GgufFile& f);

// The GGUF tensor that holds a Hugging Face weight name of architecture a, or nullopt for a name with no twin.
std::optional<std::string> gguf_name(Arch a, const std::string& hf_name);

// Whether that weight's rows were permuted by the converter (llama's q and k): the heads it
// permuted over, or 0.
int64_t permuted_heads(const ModelConfig& c, const std::string& hf_name);

// The tensor types a model's weights use, by count ("Q8_0" -> 28), for `exspec check`.
std::vector<std::pair<std::string, int64_t>> type_counts(const GgufFile& f);

// What `exspec check FILE.gguf` says of the file before it loads it, a line each: the format
// and architecture, the tensor types by count and the bytes they take in the file, the
// tokenizer (kind, pre-tokenizer, tokens, merges), whether it has a chat template.
std::vector<std::string> describe_file(const GgufFile& f);

}  // namespace exspec::gguf
