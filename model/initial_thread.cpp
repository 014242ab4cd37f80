#include "model/initial_thread.h"

#include "model/runtime.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>

namespace exspec {
namespace {

struct Job {
  const std::function<void()>* fn = nullptr;
  int threads = 0;
  std::exception_ptr error;
  bool done = false;
};

std::mutex mu;
std::condition_variable wake, finished;
std::deque<Job*> queue;
bool parked = false;
int parked_threads = 0;  // the initial thread's OpenMP count now (while parked)

void set_omp_threads(int threads) {
  using set_fn = void (*)(int);
  if (auto f = reinterpret_cast<set_fn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"))) f(threads);
}

void run(Job& j) {
  if (j.threads > 0 && j.threads != parked_threads) set_omp_threads(parked_threads = j.threads);
  try {
    (*j.fn)();
  } catch (...) {
    j.error = std::current_exception();
  }
  std::lock_guard<std::mutex> lock(mu);
  j.done = true;
  finished.notify_all();
}

}  // namespace

void run_on_initial_thread(const std::function<void()>& fn, int threads) {
  Job j{&fn, threads};
  {
    std::unique_lock<std::mutex> lock(mu);
    if (!parked) {
      lock.unlock();
      apply_thread_settings();
      fn();
      return;
    }
    queue.push_back(&j);
    wake.notify_one();
    finished.wait(lock, [&] { return j.done; });
  }
  if (j.error) std::rethrow_exception(j.error);
}

void set_initial_thread_threads(int threads) {
  // Only there: any other thread given a team of its own is what makes libgomp throttle (serve's
  // loader thread starts the engine, and with it the warm-up forwards).
  if (static_cast<pid_t>(syscall(SYS_gettid)) != getpid()) return;
  // OpenMP's count for this thread alone: at::set_num_threads would also change the count that
  // torch gives threads at their first parallel operation, and an actor's thread that then
  // starts a team of its own makes libgomp throttle every team (the header's reason).
  // Torch sets a thread's count to its default at the thread's first parallel operation: have
  // that happen first, or it undoes this (serve's initial thread runs no tensor op before).
  at::get_num_threads();
  set_omp_threads(threads);
}

bool on_unparked_initial_thread() {
  if (static_cast<pid_t>(syscall(SYS_gettid)) != getpid()) return false;
  std::lock_guard<std::mutex> lock(mu);
  return !parked;
}

void serve_on_initial_thread(const std::function<bool()>& done, int threads) {
  set_initial_thread_threads(threads);
  std::unique_lock<std::mutex> lock(mu);
  parked = true;
  parked_threads = threads;
  for (;;) {
    wake.wait_for(lock, std::chrono::milliseconds(10), [] { return !queue.empty(); });
    if (queue.empty()) {
      lock.unlock();
      const bool stop = done();
      lock.lock();
      if (stop && queue.empty()) break;
      continue;
    }
    Job* j = queue.front();
    queue.pop_front();
    lock.unlock();
    run(*j);
    lock.lock();
  }
  parked = false;  // from here on callers run their phases themselves
}

}  // namespace exspec
