#include "model/initial_thread.h"

#include "model/runtime.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>

namespace exspec {
namespace {

struct Job {
  const std::function<void()>* fn = nullptr;
  int threads = 0;
  std::exception_ptr error;
  bool done = false;
  bool returned = false;  // handed back unrun: the initial thread was announced and never parked
};

std::mutex mu;
std::condition_variable wake, finished;
std::deque<Job*> queue;
bool parked = false;
int announced = 0;       // InitialThreadPark objects alive: the initial thread parks soon
int parked_threads = 0;  // the initial thread's thread count now (while parked)

bool on_initial_thread() { return static_cast<pid_t>(syscall(SYS_gettid)) == getpid(); }

void run(Job& j) {
  if (j.threads > 0 && j.threads != parked_threads) set_thread_count(parked_threads = j.threads);
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
    // Announced but not parked yet (the first prefill can reach the verifier before the command
    // parks): wait for it. Running here instead would start an OpenMP team on this thread, and
    // libgomp would throttle every team for the rest of the process (the header's reason).
    const bool wait = (parked || announced > 0) && !on_initial_thread();
    if (wait) {
      queue.push_back(&j);
      wake.notify_one();
      finished.wait(lock, [&] { return j.done || j.returned; });
    }
  }
  if (!j.done) {  // not parked and not announced, or announced and then withdrawn
    apply_thread_settings();
    fn();
    return;
  }
  if (j.error) std::rethrow_exception(j.error);
}

InitialThreadPark::InitialThreadPark() {
  if (!on_initial_thread()) throw std::logic_error("InitialThreadPark: only the initial thread parks");
  std::lock_guard<std::mutex> lock(mu);
  ++announced;
}

InitialThreadPark::~InitialThreadPark() {
  std::lock_guard<std::mutex> lock(mu);
  if (announced > 0) --announced;  // serve_on_initial_thread took every announcement when it stopped
  if (announced > 0 || parked) return;
  // It never parked (the command failed first): the callers waiting for it run their work
  // themselves.
  for (Job* j : queue) j->returned = true;
  queue.clear();
  finished.notify_all();
}

void set_initial_thread_threads(int threads) {
  // Only there: any other thread given a team of its own is what makes libgomp throttle (serve's
  // loader thread starts the engine, and with it the warm-up forwards).
  if (!on_initial_thread()) return;
  // This thread's counts alone (set_thread_count): at::set_num_threads would also change the
  // count that torch gives threads at their first parallel operation, and an actor's thread that
  // then starts a team of its own makes libgomp throttle every team (the header's reason).
  set_thread_count(threads);
}

bool on_unparked_initial_thread() {
  if (!on_initial_thread()) return false;
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
  announced = 0;
}

}  // namespace exspec
