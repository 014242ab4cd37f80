// What the packed weights' products share (model/int8_matmul.cpp, model/bf16_weight.cpp): the
// output tiles split over the calling thread's team, and the check of an input's rows.
#pragma once
#include <ATen/ATen.h>

#include <algorithm>
#include <functional>

#include "model/kernels/kernel_threads.h"

namespace exspec {

// Output tiles over the calling thread's team, in whole groups of the tiles the kernels store
// together (one stream a thread), each tile whole on one thread.
inline void over_tiles(int64_t tiles, int64_t group, const std::function<void(int64_t, int64_t)>& f) {
  parallel_ranges((tiles + group - 1) / group, 1, [&](int64_t g0, int64_t g1) { f(g0 * group, std::min(tiles, g1 * group)); });
}

inline void check_rows(const at::Tensor& x, int64_t in, at::ScalarType t, const char* what) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == in && x.scalar_type() == t && x.device().is_cpu(), what,
              ": expected a CPU [M, ", in, "] input of dtype ", t);
}

}  // namespace exspec
