// What exspec bench runs (bench/harness.h): the sets, modes, sizes and sweeps, from defaults,
// --quick and a config file. Apart from the harness so that the sweeps in files of their own
// (bench/gap.h) take it while the harness includes them, with no circle.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace exspec {

struct BenchConfig {
  std::string model = "models/demo";
  std::string draft = "models/demo-draft";
  std::string mixed_prompts = "bench/prompts/mixed.jsonl";  // chat-like lengths
  std::string equal_prompts = "bench/prompts/equal.jsonl";  // all the same length
  int prompts = 32;                 // taken from the start of each set
  int64_t max_tokens = 24;
  std::string dtype = "float32";
  std::vector<int64_t> batch_sizes{1, 2, 4, 8, 16, 32};
  int64_t draft_tokens = 3;         // K of the main sweep
  int repeats = 3;                  // timings are medians over these, after one warm-up
  int64_t sweep_batch = 8;          // B of the W / K sweeps and the overhead anatomy table
  std::vector<int64_t> windows{8, 16, 32};
  std::vector<int64_t> k_values{1, 3, 5, 8};
  int f64_prompts = 6;              // the float64 subset (must match the oracle 100 %)
  int64_t f64_max_tokens = 12;
  std::vector<int64_t> f64_batch_sizes{1, 4};
  // Adaptive K (issue 9): nonspec, exspec at fixed K and auto in each of adaptive_modes, on the
  // demo pair and on a pair whose draft is rarely accepted (made on first use like the demo pair).
  std::vector<std::string> sweeps{"main", "grouping", "window", "draft_tokens", "float64", "adaptive", "inplace", "trained", "gap"};
  std::string low_model = "models/demo-low", low_draft = "models/demo-low-draft";
  std::vector<int64_t> adaptive_batch_sizes{1, 2, 4, 8, 16, 32};
  std::vector<int64_t> adaptive_k_values{1, 3, 5, 8};
  int adaptive_prompts = 32;
  std::vector<std::string> adaptive_modes{"exspec", "inplace"};
  // In place (issue 18): nonspec, exspec at draft_tokens, inplace at draft_tokens and auto, at
  // these batch sizes, on the adaptive prompt set; the stores hold that set's longest sequence.
  std::vector<int64_t> inplace_batch_sizes{8, 16, 32};
  // The trained demo pair (demo/README.md), whose acceptance is learned, not set by construction:
  // the in-place sweep's modes at these batch sizes on English prompts in its own tokenizer.
  std::string trained_model = "demo/target", trained_draft = "demo/draft";
  std::string trained_prompts = "bench/prompts/trained.jsonl";
  std::vector<int64_t> trained_batch_sizes{1, 8, 16};
  int64_t trained_max_tokens = 64;
  int64_t prefill_chunk = 256;
  bool overlap = true;
  int blas_threads = 0, torch_threads = 1;

  static BenchConfig quick();                         // about a minute on 2 cores
  void apply_json(const std::string& json_text);      // overrides from a config file
  std::string to_json() const;
};

}  // namespace exspec
