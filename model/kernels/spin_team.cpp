#include "model/kernels/spin_team.h"

#include <immintrin.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

namespace exspec::spin_team {
namespace {

// How long an idle worker spins before it sleeps: longer than the gaps inside a forward and
// between a step's forwards, short enough that an idle server leaves the cores alone soon (about
// what libgomp's own default spin takes).
constexpr auto kSpinFor = std::chrono::milliseconds(2);

thread_local int team_index = -1;  // this thread's index in a running team, -1 outside one

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return static_cast<int>(std::thread::hardware_concurrency());
  return CPU_COUNT(&set);
}

std::atomic<bool>& enabled() {
  static std::atomic<bool> on{[] {
    const char* v = std::getenv("EXSPEC_KERNEL_THREADS");
    return v && std::strcmp(v, "spin") == 0;
  }()};
  return on;
}

void futex(std::atomic<uint32_t>& word, int op, uint32_t value) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), op, value, nullptr, nullptr, 0);
}

class Team {
 public:
  bool run(int threads, const std::function<void(int)>& body) {
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    try {
      grow(threads - 1);
    } catch (const std::system_error&) {  // no thread to be had: libgomp's region, as before
      busy_.store(false, std::memory_order_release);
      return false;
    }
    body_ = &body;
    threads_ = threads;
    done_.store(0, std::memory_order_relaxed);
    // seq_cst with the workers' sleepers_ / generation_ pair below: either this load sees a
    // worker about to sleep and wakes it, or that worker sees the new generation and stays up.
    generation_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) futex(generation_, FUTEX_WAKE_PRIVATE, INT_MAX);
    team_index = 0;
    body(0);
    team_index = -1;
    const int workers = static_cast<int>(workers_.size());
    for (int spins = 0; done_.load(std::memory_order_acquire) < workers;)
      if (++spins < (1 << 16)) _mm_pause();
      else std::this_thread::yield();  // a worker's CPU was taken away: let it have this one
    busy_.store(false, std::memory_order_release);
    return true;
  }

 private:
  // Called with busy_ held: the generation cannot move while a worker starts.
  void grow(int workers) {
    while (static_cast<int>(workers_.size()) < workers) {
      const int i = static_cast<int>(workers_.size()) + 1;
      workers_.emplace_back([this, i, seen = generation_.load(std::memory_order_relaxed)] { work(i, seen); });
      workers_.back().detach();  // never joined: the team lives as long as the process
    }
  }

  void work(int i, uint32_t seen) {
    for (;;) {
      seen = wait_past(seen);
      if (i < threads_) {
        team_index = i;
        (*body_)(i);
        team_index = -1;
      }
      done_.fetch_add(1, std::memory_order_release);
    }
  }

  // Spins until the generation moves past `seen`, sleeping in the kernel once it has spun kSpinFor.
  uint32_t wait_past(uint32_t seen) {
    auto since = std::chrono::steady_clock::now();
    for (int spins = 1;; ++spins) {
      const uint32_t g = generation_.load(std::memory_order_acquire);
      if (g != seen) return g;
      _mm_pause();
      if (spins % 256 != 0 || std::chrono::steady_clock::now() - since < kSpinFor) continue;
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      if (generation_.load(std::memory_order_seq_cst) == seen) futex(generation_, FUTEX_WAIT_PRIVATE, seen);
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      since = std::chrono::steady_clock::now();
    }
  }

  std::vector<std::thread> workers_;
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<int> done_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<bool> busy_{false};
  const std::function<void(int)>* body_ = nullptr;  // written before generation_ moves, read after
  int threads_ = 0;
};

}  // namespace

void enable(bool on) { enabled().store(on, std::memory_order_relaxed); }

bool on() { return enabled().load(std::memory_order_relaxed); }

bool run(int threads, const std::function<void(int)>& body) {
  static const int cpus = usable_cpus();
  if (!on() || threads < 2 || threads > cpus || team_index >= 0) return false;
  static Team* team = new Team;  // never destroyed: its workers outlive static destruction
  return team->run(threads, body);
}

bool inside() { return team_index >= 0; }

int thread_num() { return team_index < 0 ? 0 : team_index; }

}  // namespace exspec::spin_team
