// Normal(0, scale) values from a seed, for the torch-free kernel tests.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

namespace exspec::test {

inline std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

}  // namespace exspec::test
