#include "model/kernels/kernel_threads.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>

#include "model/kernels/spin_team.h"

namespace exspec {
namespace {

// A thread's share of [0, n) as one word (begin in the low half, end in the high half), so that
// its owner taking from the front and another thread taking from the back never overlap.
class Share {
 public:
  void set(int64_t begin, int64_t end) { word_.store(pack(begin, end), std::memory_order_relaxed); }
  // Up to `most` items from the front (the owner) or the back (a thread done with its own), and
  // no more than half of what is left (at least `least`): false once the share is empty.
  bool take(int64_t least, int64_t most, bool front, int64_t& begin, int64_t& end) {
    uint64_t w = word_.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t b = static_cast<int64_t>(w & 0xffffffffu), e = static_cast<int64_t>(w >> 32);
      if (b >= e) return false;
      const int64_t n = std::min(most, std::max(least, (e - b + 1) / 2));
      begin = front ? b : std::max(b, e - n);
      end = front ? std::min(e, b + n) : e;
      const uint64_t rest = front ? pack(end, e) : pack(b, begin);
      if (word_.compare_exchange_weak(w, rest, std::memory_order_relaxed)) return true;
    }
  }

 private:
  static uint64_t pack(int64_t begin, int64_t end) { return static_cast<uint64_t>(begin) | static_cast<uint64_t>(end) << 32; }
  alignas(64) std::atomic<uint64_t> word_{0};
};

thread_local int kernel_threads = 0;  // use_threads' count on this thread, 0 where it never ran

// The threads a kernel may use here: use_threads' count where the team runs the kernels (the
// OpenMP count is then 1), else the OpenMP count (the tests set only that).
int threads_here() { return kernel_threads > 0 && spin_team::on() ? kernel_threads : omp_get_max_threads(); }

}  // namespace

void use_threads(int threads) {
  kernel_threads = threads;
  omp_set_num_threads(spin_team::on() ? 1 : threads);
}

void parallel_ranges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (n <= 0) return;
  const int64_t least = std::max<int64_t>(1, grain);  // the shortest chunk (but a share's last)
  const int64_t most = std::max<int64_t>(1, n / least);
  const int threads = static_cast<int>(std::min<int64_t>(threads_here(), most));
  if (threads <= 1 || spin_team::inside() || omp_in_parallel() || n >= (int64_t{1} << 31)) {
    f(0, n);
    return;
  }
  const int64_t share = (n + threads - 1) / threads;
  // Chunks of a quarter share: each thread walks its own share forward, one stream, and a thread
  // that finishes early takes what is left from the far ends of the others' (a VM's vCPU that
  // stalls no longer holds the whole step). Near a share's end the pieces halve, down to the
  // grain, so that the threads meet at the join within about one grain of each other instead of
  // one chunk (docs/performance.md#short-chunks-at-the-end-of-a-share-2026-12-02).
  const int64_t chunk = std::max(least, (share + 3) / 4);
  std::unique_ptr<Share[]> shares(new Share[threads]);
  for (int t = 0; t < threads; ++t) shares[t].set(std::min(n, t * share), std::min(n, (t + 1) * share));
  const auto body = [&](int t) {
    int64_t b = 0, e = 0;
    while (shares[t].take(least, chunk, true, b, e)) f(b, e);
    for (int i = 1; i < threads; ++i)
      while (shares[(t + i) % threads].take(least, chunk, false, b, e)) f(b, e);
  };
  if (spin_team::run(threads, std::ref(body))) return;  // a reference: no copy of the lambda on each call
#pragma omp parallel num_threads(threads)
  body(omp_get_thread_num());  // a team smaller than asked leaves shares to be taken
}

int kernel_thread_num() { return spin_team::inside() ? spin_team::thread_num() : omp_get_thread_num(); }

}  // namespace exspec
