#include "bench/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace exspec {

// Eight independent 64-bit accumulators: the loop is bound by loads, not by an add chain, and
// the compiler vectorises it (this file is built with -O3). The sum is kept so the reads stay.
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

namespace {

template <class F>
void on_threads(int n, F f) {
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t) pool.emplace_back(f, t);
  for (auto& th : pool) th.join();
}

}  // namespace

BandwidthProbe::BandwidthProbe(int threads, int64_t bytes)
    : threads_(std::max(1, threads)),
      words_per_thread_(bytes / 8 / threads_),
      buf_(new uint64_t[words_per_thread_ * threads_]) {
  uint64_t* b = buf_.get();
  const int64_t per = words_per_thread_;
  on_threads(threads_, [b, per](int t) {
    for (int64_t i = t * per; i < (t + 1) * per; ++i) b[i] = static_cast<uint64_t>(i);
  });
}

Bandwidth BandwidthProbe::measure(int passes) const {
  std::vector<double> gbs;
  std::vector<uint64_t> part(threads_, 0);
  volatile uint64_t sink = 0;
  const uint64_t* b = buf_.get();
  const int64_t per = words_per_thread_;
  for (int pass = 0; pass < std::max(1, passes); ++pass) {
    auto t0 = std::chrono::steady_clock::now();
    on_threads(threads_, [&part, b, per](int t) { part[t] = sum_slice(b + t * per, per); });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (uint64_t v : part) sink = sink + v;
    gbs.push_back(static_cast<double>(per * threads_ * 8) / s / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  return {gbs.back(), gbs[gbs.size() / 2]};
}

}  // namespace exspec
