// The row counts a bucketed forward runs at (issue 60). A step's rows through the products are
// its content tokens (B x (K + 1) in a verification, B in a draft step); padded up to the
// smallest bucket that holds them, every step of a bucket has the same shapes there, so the
// products take the same kernels whatever the batch (cuBLAS picks its kernel, and so its
// rounding, by the row count) and the step can be a CUDA graph's replay
// (model/step_runner.h). Torch-free.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace exspec {

struct RowBuckets {
  std::vector<int64_t> sizes;  // ascending

  // The buckets of the issue: fine where batches are small, coarser where padding is a
  // smaller share of the step.
  static RowBuckets standard() { return {{1, 2, 4, 8, 16, 24, 32, 48, 64}}; }

  // The smallest bucket that holds n rows; 0 when none does (the step runs unpadded, eagerly).
  int64_t bucket(int64_t n) const {
    auto it = std::lower_bound(sizes.begin(), sizes.end(), n);
    return it == sizes.end() ? 0 : *it;
  }
  int64_t largest() const { return sizes.empty() ? 0 : sizes.back(); }
};

}  // namespace exspec
