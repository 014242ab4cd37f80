// The served model's grammars: its vocabulary as the grammar engine sees it (the server makes it
// from the target's tokenizer, with the model's EOS and the chat template's end of turn as end
// tokens: model/tokenizer/grammar_vocab.h), built once on a background thread so that the server never waits for it, the bounded cache of compiled
// grammars (grammar_cache entries, grammar_cache_memory bytes), and the small pool of threads
// that compiles them, each compile within its budget (grammar/budget.h: CPU seconds and a flag
// that cancels it) so that no request can take the CPU from the others for longer than that.
// A request that needs a grammar before the vocabulary is built waits for it
// (docs/structured-output.md has the costs). Torch-free.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include "grammar/budget.h"
#include "grammar/grammar_cache.h"
#include "grammar/vocabulary.h"

namespace exspec::grammar {

struct CompileLimits {
  double budget_s = 1;     // CPU seconds of one compile (--grammar-compile-budget); <= 0: none
  int threads = 1;         // the compile pool's threads
  size_t max_waiting = 64;  // compiles queued behind the running ones; beyond, submit refuses
  int nice = 0;             // added to the pool threads' nice value: below decoding's priority
};

class GrammarService {
 public:
  using Flag = std::shared_ptr<std::atomic<bool>>;
  // vocabulary runs once, on the building thread; on_built (optional) runs there when the
  // vocabulary is ready: its size and the seconds it took (the log line).
  using MakeVocabulary = std::function<std::shared_ptr<const Vocabulary>()>;
  GrammarService(MakeVocabulary vocabulary, size_t capacity, size_t max_bytes = 0,
                 std::function<void(size_t tokens, double seconds)> on_built = nullptr, CompileLimits limits = {});
  ~GrammarService();  // stop()

  // Runs work(budget) on the pool: the budget carries the CPU seconds and `cancelled` (set it to
  // stop the compile: the client went away). Whatever work throws goes to failed(), on the pool
  // thread (CompileCancelled once cancelled, GrammarError("budget") past the budget). False (and
  // nothing runs) when max_waiting compiles already wait or the service is stopping.
  using Work = std::function<void(const CompileBudget&)>;
  bool submit(Work work, std::function<void(std::exception_ptr)> failed, Flag cancelled);

  // The compiled grammar, from the cache or compiled now on the caller's thread (a pool thread,
  // inside submit's work) within `budget`. Throws GrammarError, CompileCancelled.
  std::shared_ptr<const CompiledGrammar> get(const GrammarRequest& r, const CompileBudget& budget);

  // Cancels every compile, running or waiting, and refuses new ones (shutdown).
  void cancel_all();
  // cancel_all(), then waits for the pool's threads to end.
  void stop();

  struct Stats {
    GrammarCache::Stats cache;  // zeros while the vocabulary is being built
    size_t cancelled = 0;    // compiles stopped (or never started) because they were cancelled
    size_t over_budget = 0;  // compiles stopped at their CPU budget (400s)
    size_t refused = 0;      // compiles refused: the pool's queue was full (429s)
    size_t running = 0, waiting = 0;
    double cpu_seconds = 0;  // of the pool's threads, in the work they ran (bounding and compiles)
  };
  Stats stats() const;
  bool ready() const;
  // The vocabulary's build time in seconds (waits for it).
  double vocabulary_seconds() const;
  double budget_seconds() const { return limits_.budget_s; }

 private:
  struct Built {
    std::unique_ptr<GrammarCache> cache;
    double seconds = 0;
  };
  struct Job {
    Work work;
    std::function<void(std::exception_ptr)> failed;
    Flag cancelled;
  };
  GrammarCache& cache() const;
  void worker();
  std::exception_ptr run(Job& job);  // what the work threw, if anything
  void count_failure(std::exception_ptr error);  // under mu_

  std::shared_future<std::shared_ptr<Built>> built_;
  CompileLimits limits_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> waiting_;
  std::vector<Flag> running_;
  bool stopping_ = false;
  size_t cancelled_ = 0, over_budget_ = 0, refused_ = 0;
  double cpu_seconds_ = 0;
  std::vector<std::unique_ptr<class CompileThread>> threads_;
};

}  // namespace exspec::grammar
