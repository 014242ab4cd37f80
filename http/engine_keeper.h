// One thread for the engine calls that may block (shutdown(); stats() is cheap but goes here too).
// Seen with CAF 0.17 while stats() was a request through a scoped_actor: after stats() had been
// called from an Asio thread, a later shutdown() from another thread hung in ~actor_system.
// stats() now reads a snapshot the pool-manager publishes (no actor round trip; tested in
// tests/test_pipeline.cpp), and keeping these calls on one thread costs nothing.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "actors/engine.h"

namespace exspec::http {

class EngineKeeper {
 public:
  EngineKeeper() : thread_([this] { loop(); }) {}
  ~EngineKeeper() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // Runs f on the keeper thread and returns its result.
  template <class F>
  auto call(F f) -> decltype(f()) {
    auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::move(f));
    auto fut = task->get_future();
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.emplace_back([task] { (*task)(); });
    }
    cv_.notify_all();
    return fut.get();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      auto t = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      t();
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace exspec::http
