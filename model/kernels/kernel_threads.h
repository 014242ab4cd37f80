// Splits a kernel's work over the calling thread's OpenMP team (torch-free). The seams call this
// instead of at::parallel_for: ATen's parallel_for is a header template, and exspec's own TUs are
// not built with -fopenmp, so there it ran every range on the calling thread. This file is (see
// CMakeLists.txt), on the libgomp that libtorch uses: the team is the one at::set_num_threads
// sized, and it is never nested inside another.
#pragma once
#include <cstdint>
#include <functional>

namespace exspec {

// f(begin, end) over contiguous ranges covering [0, n), one range a thread, each at least `grain`
// long (so few items stay on the calling thread alone). f must not throw.
void parallel_ranges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

}  // namespace exspec
