// The pool that runs the costly part of request work (reading a large body's JSON, validating it,
// rendering the chat template, tokenizing a long prompt) on threads of a lower scheduling
// priority than the engine's: while decoding runs, such work takes what the cores have left, so
// that clients who send costly requests slow each other, not the streams of the others. A request
// whose body is small is cheap whatever it says (its cost grows with its bytes) and stays on the
// connection's thread, at the engine's priority: it never waits behind a costly one. The grammar
// compile pool runs at the same lower priority (grammar/grammar_service.h). Torch-free.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace exspec::http {

class RequestWork {
 public:
  struct Options {
    int threads = 1;          // limits.request_threads
    int nice = 19;            // limits.request_nice: added to the threads' nice value (0: none)
    size_t max_waiting = 64;  // limits.max_request_queue: beyond it submit refuses (429)
  };
  explicit RequestWork(Options o);
  ~RequestWork();  // drops the work still waiting, then joins the threads

  // Runs work on a pool thread. False (and nothing runs) when max_waiting items already wait.
  bool submit(std::function<void()> work);

  struct Stats {
    size_t running = 0, waiting = 0;
  };
  Stats stats() const;

 private:
  void worker();

  Options opt_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> waiting_;
  size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace exspec::http
