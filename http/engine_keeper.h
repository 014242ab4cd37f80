// One thread for the engine calls that may block (shutdown(); stats() is cheap but goes here too).
// Seen with CAF 0.17 while stats() was a request through a scoped_actor: after stats() had been
// called from an Asio thread, a later shutdown() from another thread hung in ~actor_system.
// stats() now reads a snapshot the pool-manager publishes (no actor round trip; tested in
// tests/test_pipeline.cpp), and keeping these calls on one thread costs nothing.
#pragma once
#include <future>
#include <memory>
#include <thread>

#include "actors/engine.h"
#include "jobs/task_queue.h"

namespace exspec::http {

class EngineKeeper {
 public:
  EngineKeeper() : thread_([this] { loop(); }) {}
  ~EngineKeeper() {
    q_.stop();
    thread_.join();
  }

  // Runs f on the keeper thread and returns its result.
  template <class F>
  auto call(F f) -> decltype(f()) {
    auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::move(f));
    auto fut = task->get_future();
    q_.push([task] { (*task)(); });
    return fut.get();
  }

 private:
  void loop() {
    while (true) {
      jobs::TaskQueue::Taken t = q_.wait();
      for (auto& task : t.tasks) task();
      if (t.stopped) return;
    }
  }
  jobs::TaskQueue q_;
  std::thread thread_;
};

}  // namespace exspec::http
