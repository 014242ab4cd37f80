// Generated checkpoints for tests: made once per test process under a temporary directory.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <vector>

#include "model/seq_request.h"
#include "model/tools/make_model.h"

namespace exspec {
class Decoder;
}

namespace exspec::test {

// Where the model tests run: EXSPEC_TEST_DEVICE (cpu, cuda, cuda:N), cpu when unset, so that
// scripts/gpu-check runs the same float64 oracle tests on a GPU that CI runs on the CPU.
const std::string& device_name();
at::Device device();

// A fresh scratch directory for this process (removed at exit).
std::string scratch_dir();
// The Python that runs the test tools (numpy, torch): /usr/bin/python3, Debian's, unless
// EXSPEC_TEST_PYTHON names another (a GPU host whose system Python lacks numpy).
std::string python();
// Removes a file or a directory tree, ignoring errors. Not std::filesystem::remove_all: PyTorch's
// wheel libtorch.so exports its own copy of it, which jumps to address 0 (found on a GPU host).
void remove_tree(const std::string& path);
// The directory of a generated model with these options (made on first use, then reused).
std::string model_dir(const MakeModelOptions& opts);
// ModelConfig::parse's error for config.json text, or "" when it parses (the config tests' refusals).
std::string config_error(const std::string& json_text);
// s with its first `from` replaced by `to`; std::logic_error when s has none (a test's own fault).
std::string replace_once(std::string s, const std::string& from, const std::string& to);
std::string model_dir(const std::string& arch, const std::string& preset = "tiny", uint64_t seed = 1);

// A model loaded in float64 on the test device: the oracle's dtype.
std::shared_ptr<const Decoder> load64(const std::string& dir);
// The dtypes in which a row cannot see its batch (issues 47 and 69), so that every serving path
// equals that dtype's own batch-1 plain decoding: float32, int8 and bfloat16, on the fixed-order
// kernels of every instruction set (EXSPEC_ISA picks the path under test). On the CPU only:
// empty on a GPU.
std::vector<at::ScalarType> invariant_dtypes();
// A model loaded in `dtype` (at::kChar: int8 weights) on the CPU.
std::shared_ptr<const Decoder> load_as(const std::string& dir, at::ScalarType dtype);
// `dir` loaded in `dtype` on `device` with its head over `shortlist` (model/shortlist_head.h).
std::shared_ptr<const Decoder> load_shortlisted(const std::string& dir, at::ScalarType dtype, at::Device device,
                                                std::vector<int64_t> shortlist);
// `dir` in int8 on the CPU with its head read in 4 bits, `candidates` scored again (model/screened_head.h).
std::shared_ptr<const Decoder> load_screened(const std::string& dir, int64_t candidates);
// The most frequent `share` of the distinct tokens in `results`, ascending: a draft shortlist
// that holds most of a target's choices there and misses the rest.
std::vector<int64_t> frequent_tokens(const std::vector<SeqResult>& results, double share, int64_t vocab);
// The first layer of the tiny target of `arch` (seed 1) as a draft, made once per process.
std::string truncated_draft(const std::string& arch = "llama");
// The K-quant oracle model (`arch`, preset kquant: every product whole super-blocks of 256), or
// its first layer as a draft, written as a GGUF file of `type` (q4_k, q6_k, q4_k_m) by
// tests/gguf/write_gguf.py, once per process; load it under int8 to run the K-quant kernel.
std::string kquant_gguf(const std::string& type, bool draft = false, const std::string& arch = "llama");
// The logits [T, vocab] of `tokens` computed by `m` alone (one row, no padding, one forward).
at::Tensor alone_logits(const Decoder& m, const std::vector<int64_t>& tokens);
// The keys and values of `tokens` computed by `m` alone (one row, no padding), on the CPU:
// per layer [kv_heads, T, 2 * head_dim].
std::vector<at::Tensor> alone_kv(const Decoder& m, const std::vector<int64_t>& tokens);

// Deterministic prompts of mixed lengths in [min_len, max_len] over ids [0, vocab).
std::vector<std::vector<int64_t>> mixed_prompts(int n, int min_len, int max_len, int64_t vocab, uint64_t seed);

// The oracle sweeps' workload: 16 mixed prompts with max_tokens 6..24 and as stop token one the
// target emits early for some of them, so sequences end mid-batch by length and by stop; and
// their batch-1 greedy results. Throws unless both kinds of finish occur.
struct StoppingCase {
  std::vector<SeqRequest> requests;
  std::vector<SeqResult> want;
};
StoppingCase stopping_requests(const Decoder& target);

}  // namespace exspec::test
