// Splits a kernel's work over the calling thread's OpenMP team (torch-free). The seams call this
// instead of at::parallel_for: ATen's parallel_for is a header template, and exspec's own TUs are
// not built with -fopenmp, so there it ran every range on the calling thread. This file is (see
// CMakeLists.txt), on the libgomp that libtorch uses: the team is the one at::set_num_threads
// sized, and it is never nested inside another.
#pragma once
#include <cstdint>
#include <functional>

namespace exspec {

// f(begin, end) over contiguous ranges that cover [0, n), each index once and each range on one
// thread. Each thread walks its own share (about n / threads) forward in chunks of a quarter share,
// at least `grain` long, and a thread done early takes chunks from the far ends of the others'
// shares, so a thread that stalls (a VM's vCPU taken away) does not hold up the rest. Fewer than
// 2 × grain items run on the calling thread alone. f must not throw.
void parallel_ranges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

}  // namespace exspec
