// The model pair `exspec serve` and `exspec batch` use when no --model is given: the trained demo
// pair shipped in the repository's demo/ (see demo/README.md), else a seeded random pair that
// make-model writes once into the cache directory (a binary moved away from its source tree).
#pragma once
#include <string>

namespace exspec {

struct DemoPair {
  std::string model, draft;
};

// EXSPEC_DEMO_DIR in the environment overrides where the shipped pair is looked for.
DemoPair demo_pair(const std::string& cache_dir, const char* command);

}  // namespace exspec
