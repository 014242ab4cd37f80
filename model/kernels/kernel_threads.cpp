#include "model/kernels/kernel_threads.h"

#include <omp.h>

#include <algorithm>

namespace exspec {

void parallel_ranges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (n <= 0) return;
  const int64_t most = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
  const int threads = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), most));
  if (threads <= 1 || omp_in_parallel()) {
    f(0, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t chunk = (n + nt - 1) / nt, b = t * chunk, e = std::min(n, b + chunk);
    if (b < e) f(b, e);
  }
}

}  // namespace exspec
