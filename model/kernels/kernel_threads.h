// Splits a kernel's work over the calling thread's threads (torch-free). The seams call this
// instead of at::parallel_for: ATen's parallel_for is a header template, and exspec's own TUs are
// not built with -fopenmp, so there it ran every range on the calling thread. The count is the
// calling thread's (use_threads below); the threads are spin_team.h's, or, where that team cannot
// take the call, a libgomp region (this file is built with -fopenmp, on the libgomp that libtorch
// uses). A call inside either runs on its own thread alone.
#pragma once
#include <cstdint>
#include <functional>

namespace exspec {

// f(begin, end) over contiguous ranges that cover [0, n), each index once and each range on one
// thread. Each thread walks its own share (about n / threads) forward in chunks of a quarter share,
// at least `grain` long, and a thread done early takes chunks from the far ends of the others'
// shares, so a thread that stalls (a VM's vCPU taken away) does not hold up the rest. No chunk is
// more than half of what is left of its share (unless that is under `grain`), so the last ones are
// short and the threads finish close together. Fewer than 2 × grain items run on the calling
// thread alone. f must not throw.
void parallel_ranges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

// Inside f: the calling thread's index among the threads running it (0 for the caller's own).
int kernel_thread_num();

// Gives the calling thread's kernels `threads` threads. Where spin_team.h's team runs them, the
// thread's OpenMP count becomes 1: ATen's own operators then run on the calling thread, and no
// libgomp worker spins for milliseconds after them beside the team's on the same cores (on 2
// cores the two took turns and a long prefill was slower). Otherwise both counts are `threads`.
// Whether the team is on is read here, at the call. A thread that never called this gives its
// kernels its OpenMP count.
void use_threads(int threads);

}  // namespace exspec
