// Threads that can run parallel_ranges' shares (kernel_threads.h) in place of a libgomp region
// (torch-free), with EXSPEC_KERNEL_THREADS=spin. libgomp ends every barrier with a futex_wake
// system call whether or not a thread sleeps, two a region; on the VMs we measure on a system
// call costs about a microsecond, and a one-row forward enters about 80 regions. Here the calling
// thread hands a body to workers that spin on a counter, and makes a system call only to wake a
// worker that has gone to sleep after spinning idle for a while. ATen's own operators on a thread
// given its count by use_threads (kernel_threads.h) run serially while the team is on, so that
// libgomp's workers, which spin for milliseconds after each region, no longer take turns with the
// team's on the same cores. Not the default: measured against libgomp's regions, its gain did not
// repeat from one VM to the next (docs/performance.md#a-team-that-spins-in-place-of-libgomps-regions-2026-12-02).
#pragma once
#include <functional>

namespace exspec::spin_team {

// Runs body(0) on the calling thread and body(1) ... body(threads - 1) on the team's workers at
// the same time, and returns when all have returned: true. False, having run nothing, where the
// team cannot take it: it is not enabled, another thread's call holds it, the caller is one of its
// threads, or threads is under 2 or over the CPUs this process may use (the caller then runs
// libgomp's region). body must not throw.
bool run(int threads, const std::function<void(int)>& body);

// Whether run takes calls: from EXSPEC_KERNEL_THREADS=spin at start (libgomp's regions otherwise),
// or as enable last set it (the tests run both ways).
void enable(bool on);
bool on();

// Whether the calling thread is running a body of the team's (a call to run from it returns false).
bool inside();

// The calling thread's index within the team running it (0 on any thread outside a team).
int thread_num();

}  // namespace exspec::spin_team
