// parallel_ranges (model/kernels/kernel_threads.h), which splits every kernel's work over the
// threads: every index exactly once, in ranges that each stay on one thread, whatever the count,
// grain and team; and a thread that stalls has its share taken by the others.
#include <catch2/catch.hpp>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "model/kernels/kernel_threads.h"

using exspec::parallel_ranges;

namespace {

struct Call {
  int thread;
  int64_t begin, end;
};

std::vector<Call> calls_of(int64_t n, int64_t grain) {
  std::vector<Call> calls;
  std::mutex m;
  parallel_ranges(n, grain, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    calls.push_back({omp_get_thread_num(), b, e});
  });
  return calls;
}

// Restores the team size the other tests run with.
struct Team {
  int before = omp_get_max_threads();
  explicit Team(int n) { omp_set_num_threads(n); }
  ~Team() { omp_set_num_threads(before); }
};

}  // namespace

CATCH_TEST_CASE("parallel_ranges: every index once, in non-empty ranges, for any count, grain and team", "[threads]") {
  for (int threads : {1, 2, 3, 4}) {
    Team team(threads);
    for (int64_t grain : {1, 3, 16})
      for (int64_t n = 0; n <= 130; ++n) {
        std::vector<int> seen(static_cast<size_t>(n), 0);
        const auto calls = calls_of(n, grain);
        for (const Call& c : calls) {
          CATCH_REQUIRE(0 <= c.begin);
          CATCH_REQUIRE(c.begin < c.end);
          CATCH_REQUIRE(c.end <= n);
          for (int64_t i = c.begin; i < c.end; ++i) ++seen[static_cast<size_t>(i)];
        }
        for (int64_t i = 0; i < n; ++i) CATCH_REQUIRE(seen[static_cast<size_t>(i)] == 1);
        if (n < 2 * grain) CATCH_CHECK(calls.size() == (n > 0 ? 1u : 0u));  // too few to split: the calling thread alone
      }
  }
}

CATCH_TEST_CASE("parallel_ranges: each thread walks its own share forward, one stream", "[threads]") {
  Team team(2);
  if (omp_get_max_threads() < 2) return;
  const int64_t n = 1000, share = n / 2;
  const std::vector<Call> calls = calls_of(n, 1);  // in the order they ran
  for (int t = 0; t < 2; ++t) {
    int64_t next = t * share;
    for (const Call& c : calls)
      if (c.thread == t && c.begin >= t * share && c.end <= (t + 1) * share) {
        CATCH_CHECK(c.begin >= next);
        next = c.end;
      }
  }
}

CATCH_TEST_CASE("parallel_ranges: a stalled thread's share is taken by the other", "[threads]") {
  Team team(2);
  if (omp_get_max_threads() < 2) return;
  const int64_t n = 64, share = n / 2;
  std::atomic<bool> started{false}, taken{false};
  std::vector<int> by(static_cast<size_t>(n), -1);
  const auto wait_for = [](const std::atomic<bool>& flag) {  // or 20 s pass
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!flag && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  parallel_ranges(n, 1, [&](int64_t b, int64_t e) {
    const int t = omp_get_thread_num();
    for (int64_t i = b; i < e; ++i) by[static_cast<size_t>(i)] = t;
    if (t == 1 && b < share) taken = true;
    if (t == 0) started = true;
    // Thread 1 waits until thread 0 holds its first chunk: on a busy machine thread 0 can start
    // late enough for thread 1 to have taken its whole share, index 0 too (seen in CI).
    if (t == 1) wait_for(started);
    // Thread 0 stalls in its first chunk until thread 1 has taken from its share.
    if (t == 0) wait_for(taken);
  });
  CATCH_REQUIRE(taken);
  int stolen = 0;
  for (int64_t i = 0; i < share; ++i) stolen += by[static_cast<size_t>(i)] == 1;
  CATCH_CHECK(stolen > 0);
  CATCH_CHECK(by[0] == 0);  // the owner's first chunk
  for (int64_t i = share; i < n; ++i) CATCH_CHECK(by[static_cast<size_t>(i)] == 1);  // its own share, all of it
}
