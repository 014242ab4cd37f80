// Generated checkpoints for tests: made once per test process under a temporary directory.
#pragma once
#include <c10/core/Device.h>

#include <string>
#include <vector>

#include "model/make_model.h"

namespace exspec::test {

// Where the model tests run: EXSPEC_TEST_DEVICE (cpu, cuda, cuda:N), cpu when unset, so that
// scripts/gpu-check runs the same float64 oracle tests on a GPU that CI runs on the CPU.
const std::string& device_name();
at::Device device();

// A fresh scratch directory for this process (removed at exit).
std::string scratch_dir();
// The directory of a generated model with these options (made on first use, then reused).
std::string model_dir(const MakeModelOptions& opts);
std::string model_dir(const std::string& arch, const std::string& preset = "tiny", uint64_t seed = 1);

// Deterministic prompts of mixed lengths in [min_len, max_len] over ids [0, vocab).
std::vector<std::vector<int64_t>> mixed_prompts(int n, int min_len, int max_len, int64_t vocab, uint64_t seed);

}  // namespace exspec::test
