// parallel_ranges (model/kernels/kernel_threads.h), which splits every kernel's work over the
// threads: every index exactly once, in ranges that each stay on one thread, whatever the count,
// grain and team; and a thread that stalls has its share taken by the others. Each case runs on
// libgomp's regions and again with spin_team.h's threads enabled (which on 2 CPUs take the
// 2-thread teams; the larger ones fall back to libgomp's).
#include <catch2/catch.hpp>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "model/kernels/kernel_threads.h"
#include "model/kernels/spin_team.h"

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
    calls.push_back({exspec::kernel_thread_num(), b, e});
  });
  return calls;
}

// Runs the case with the spin team enabled or not (a GENERATE: the case runs once each way), and
// restores the setting after.
struct Threads {
  bool before = exspec::spin_team::on();
  explicit Threads(bool spin) { exspec::spin_team::enable(spin); }
  ~Threads() { exspec::spin_team::enable(before); }
};

// Waits until ready() holds, or 20 s pass (the test then fails on what it checks next).
template <class Ready>
void wait_until(const Ready& ready) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!ready() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// Restores the team size the other tests run with.
struct Team {
  int before = omp_get_max_threads();
  explicit Team(int n) { omp_set_num_threads(n); }
  ~Team() { omp_set_num_threads(before); }
};

}  // namespace

CATCH_TEST_CASE("parallel_ranges: every index once, in non-empty ranges, for any count, grain and team", "[threads]") {
  Threads threads_used(GENERATE(false, true));
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
  Threads threads_used(GENERATE(false, true));
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
  Threads threads_used(GENERATE(false, true));
  Team team(2);
  if (omp_get_max_threads() < 2) return;
  const int64_t n = 64, share = n / 2;
  std::atomic<bool> started{false}, taken{false};
  std::vector<int> by(static_cast<size_t>(n), -1);
  const auto wait_for = [](const std::atomic<bool>& flag) { wait_until([&] { return flag.load(); }); };
  parallel_ranges(n, 1, [&](int64_t b, int64_t e) {
    const int t = exspec::kernel_thread_num();
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

CATCH_TEST_CASE("parallel_ranges: the chunks halve toward a share's end, so the threads finish together", "[threads]") {
  Threads threads_used(GENERATE(false, true));
  Team team(2);
  if (omp_get_max_threads() < 2) return;
  for (int64_t grain : {1, 4}) {
    const int64_t n = 1000, share = n / 2;
    std::atomic<int64_t> done{0}, first1{0};
    std::vector<Call> calls;
    std::mutex m;
    bool first0 = true;
    // Thread 1 holds its first chunk until everything else is done, and thread 0 starts once
    // thread 1 holds it: thread 0 then walks its own share and takes the rest of thread 1's alone,
    // so the chunks' sizes do not depend on timing.
    parallel_ranges(n, grain, [&](int64_t b, int64_t e) {
      const int t = exspec::kernel_thread_num();
      {
        std::lock_guard<std::mutex> lock(m);
        calls.push_back({t, b, e});
      }
      if (t == 1 && first1 == 0) {
        first1 = e - b;
        wait_until([&] { return done == n - (e - b); });
      }
      if (t == 0 && first0) {
        first0 = false;
        wait_until([&] { return first1 > 0; });
      }
      done += e - b;
    });
    CATCH_REQUIRE(done == n);
    CATCH_REQUIRE(first1 > 0);
    // Thread 0's chunks in the order taken: each at most half of what its share held then
    // (rounded up) or `grain`, and at most a quarter share.
    int64_t left0 = share, left1 = share - first1, last = 0;
    for (const Call& c : calls) {
      if (c.thread != 0) continue;
      int64_t& left = c.begin < share ? left0 : left1;
      const int64_t size = c.end - c.begin;
      CATCH_CHECK(size <= std::max<int64_t>(grain, (left + 1) / 2));
      CATCH_CHECK(size <= std::max<int64_t>(grain, (share + 3) / 4));
      left -= size;
      last = size;
    }
    CATCH_CHECK(left0 == 0);
    CATCH_CHECK(left1 == 0);
    CATCH_CHECK(last <= grain);  // the step's last chunk is one grain
  }
}

CATCH_TEST_CASE("parallel_ranges: calls in a row, after the workers slept, and from two threads at once", "[threads]") {
  Threads threads_used(GENERATE(false, true));
  Team team(2);
  // Each call sums its indices; every call must cover [0, n) once, whichever threads ran it.
  const auto check_call = [](int64_t n) {
    std::atomic<int64_t> sum{0}, count{0};
    parallel_ranges(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum += i;
      count += e - b;
    });
    return count == n && sum == n * (n - 1) / 2;
  };
  int bad = 0;
  for (int i = 0; i < 20000; ++i) bad += !check_call(1 + i % 97);  // back to back: the workers spin
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // past the spin: the workers sleep
    bad += !check_call(64);
  }
  // Two callers at once: one holds the team, the other runs a libgomp region (or waits its turn).
  std::atomic<int> bad2{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 2; ++c)
    callers.emplace_back([&] {
      omp_set_num_threads(2);
      for (int i = 0; i < 2000; ++i) bad2 += !check_call(1 + i % 61);
    });
  for (auto& t : callers) t.join();
  CATCH_CHECK(bad == 0);
  CATCH_CHECK(bad2 == 0);
  // Which threads ran: the spin team's exactly when it is enabled (and there are 2 CPUs for it).
  std::atomic<int> in_team{0};
  parallel_ranges(64, 1, [&](int64_t, int64_t) { in_team += exspec::spin_team::inside(); });
  if (!exspec::spin_team::on()) CATCH_CHECK(in_team == 0);
  else if (std::thread::hardware_concurrency() >= 2) CATCH_CHECK(in_team > 0);
}

CATCH_TEST_CASE("parallel_ranges: a call inside a range runs on that range's thread alone", "[threads]") {
  Threads threads_used(GENERATE(false, true));
  Team team(2);
  std::atomic<int> outer{0}, inner_elsewhere{0};
  parallel_ranges(8, 1, [&](int64_t b, int64_t e) {
    outer += static_cast<int>(e - b);
    const auto self = std::this_thread::get_id();
    parallel_ranges(100, 1, [&](int64_t, int64_t) { inner_elsewhere += std::this_thread::get_id() != self; });
  });
  CATCH_CHECK(outer == 8);
  CATCH_CHECK(inner_elsewhere == 0);
}

CATCH_TEST_CASE("use_threads: the kernels get the count, and with the spin team ATen's OpenMP count is 1", "[threads]") {
  const bool spin = GENERATE(false, true);
  Threads threads_used(spin);
  if (std::thread::hardware_concurrency() < 2) return;
  int omp_count = 0;
  std::mutex m;
  std::vector<int> ran;  // the kernel thread numbers that took a range
  std::thread([&] {    // a thread of its own: the counts are per thread, and this one ends here
    exspec::use_threads(2);
    omp_count = omp_get_max_threads();
    parallel_ranges(64, 1, [&](int64_t, int64_t) {
      {
        std::lock_guard<std::mutex> lock(m);
        if (std::find(ran.begin(), ran.end(), exspec::kernel_thread_num()) == ran.end()) ran.push_back(exspec::kernel_thread_num());
      }
      wait_until([&] {  // hold each range until both threads have one, so neither takes them all
        std::lock_guard<std::mutex> lock(m);
        return ran.size() >= 2;
      });
    });
  }).join();
  CATCH_CHECK(omp_count == (spin ? 1 : 2));
  CATCH_CHECK(ran.size() == 2);
}
