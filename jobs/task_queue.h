// Tasks handed to one thread by others (engine callbacks, HTTP handlers): that thread waits for
// them and runs them in order. Used by the batch runner, the engine keeper and `exspec batch`.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

namespace exspec::jobs {

class TaskQueue {
 public:
  struct Taken {
    std::deque<std::function<void()>> tasks;  // in the order they were pushed
    bool woken = false;                       // wake() was called since the last wait
    bool stopped = false;                     // stop() was called: run `tasks`, then leave
  };

  void push(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(f));
    }
    cv_.notify_one();
  }
  // Wakes the waiting thread without a task (it has something else to look at).
  void wake() { set([this] { woken_ = true; }); }
  void stop() { set([this] { stopped_ = true; }); }

  // Waits until there is a task, a wake or a stop, at most `timeout` when given.
  Taken wait(std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [&] { return stopped_ || woken_ || !tasks_.empty(); };
    if (timeout) cv_.wait_for(lock, *timeout, ready);
    else cv_.wait(lock, ready);
    Taken t;
    t.tasks.swap(tasks_);
    t.woken = woken_;
    t.stopped = stopped_;
    woken_ = false;
    return t;
  }

 private:
  template <class F>
  void set(F f) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      f();
    }
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool woken_ = false, stopped_ = false;
};

}  // namespace exspec::jobs
