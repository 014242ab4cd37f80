#include "bench/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace exspec {
namespace {

// Eight independent 64-bit accumulators: the loop is bound by loads, not by an add chain, and
// GCC vectorises it at -O2 and above. The result is kept so the reads cannot be optimised away.
uint64_t sum_slice(const uint64_t* p, int64_t n) {
  uint64_t a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) a[j] += p[i + j];
  for (; i < n; ++i) a[0] += p[i];
  uint64_t s = 0;
  for (uint64_t v : a) s += v;
  return s;
}

}  // namespace

Bandwidth measure_read_bandwidth(int threads, int64_t bytes, int passes) {
  threads = std::max(1, threads);
  const int64_t words = bytes / 8;
  std::unique_ptr<uint64_t[]> buf(new uint64_t[words]);
  // Touched by the same threads that read it later, so no page faults fall inside a timed pass.
  std::vector<std::thread> pool;
  const int64_t per = words / threads;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int64_t i = t * per; i < (t + 1) * per; ++i) buf[i] = static_cast<uint64_t>(i);
    });
  for (auto& th : pool) th.join();

  std::vector<double> gbs;
  volatile uint64_t sink = 0;
  for (int pass = 0; pass <= passes; ++pass) {
    std::vector<uint64_t> part(threads, 0);
    pool.clear();
    auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { part[t] = sum_slice(buf.get() + t * per, per); });
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (uint64_t v : part) sink = sink + v;
    if (pass > 0) gbs.push_back(static_cast<double>(per * threads * 8) / s / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  return {gbs.back(), gbs[gbs.size() / 2]};
}

}  // namespace exspec
