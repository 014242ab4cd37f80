#include "grammar/grammar_service.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "grammar/error.h"

namespace exspec::grammar {

// A pool thread with a large stack: the compiler's passes recurse over expressions, which a
// prefixItems list thousands long makes thousands of levels deep (the memory is reserved, and
// only what the recursion reaches is used).
class CompileThread {
 public:
  explicit CompileThread(std::function<void()> body) : body_(std::move(body)) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, size_t{256} << 20);
    const int rc = pthread_create(&id_, &attr, &CompileThread::enter, this);
    pthread_attr_destroy(&attr);
    if (rc != 0) throw std::runtime_error("cannot start a grammar compile thread");
  }
  ~CompileThread() { pthread_join(id_, nullptr); }

 private:
  static void* enter(void* self) {
    static_cast<CompileThread*>(self)->body_();
    return nullptr;
  }
  std::function<void()> body_;
  pthread_t id_{};
};

GrammarService::GrammarService(MakeVocabulary vocabulary, size_t capacity, size_t max_bytes,
                               std::function<void(size_t, double)> on_built, CompileLimits limits)
    : limits_(limits) {
  built_ = std::async(std::launch::async, [vocabulary = std::move(vocabulary), capacity, max_bytes, on_built = std::move(on_built)] {
             const auto t0 = std::chrono::steady_clock::now();
             auto b = std::make_shared<Built>();
             auto vocab = vocabulary();
             const size_t tokens = vocab->size();
             b->cache = std::make_unique<GrammarCache>(std::move(vocab), capacity, max_bytes);
             b->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
             if (on_built) on_built(tokens, b->seconds);
             return b;
           }).share();
  for (int i = 0; i < std::max(1, limits_.threads); ++i) threads_.push_back(std::make_unique<CompileThread>([this] { worker(); }));
}

GrammarService::~GrammarService() { stop(); }

GrammarCache& GrammarService::cache() const { return *built_.get()->cache; }

std::shared_ptr<const CompiledGrammar> GrammarService::get(const GrammarRequest& r,
                                                                    const CompileBudget& budget) {
  // The vocabulary may still be building: wait for it, but not for a compile nobody wants.
  while (built_.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready)
    if (budget.cancelled && budget.cancelled->load()) throw CompileCancelled();
  return cache().get(r, budget);
}

bool GrammarService::submit(Work work, std::function<void(std::exception_ptr)> failed, Flag cancelled) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || waiting_.size() >= limits_.max_waiting) {
      ++refused_;
      return false;
    }
    waiting_.push_back(Job{std::move(work), std::move(failed), std::move(cancelled)});
  }
  cv_.notify_one();
  return true;
}

void GrammarService::worker() {
  lower_thread_priority(limits_.nice);
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      if (waiting_.empty()) return;  // stopping, and nothing left to answer
      job = std::move(waiting_.front());
      waiting_.pop_front();
      running_.push_back(job.cancelled);
      if (stopping_) job.cancelled->store(true);
    }
    const double cpu0 = thread_cpu_seconds();
    const std::exception_ptr error = run(job);
    const double cpu = thread_cpu_seconds() - cpu0;
    {
      // Counted and no longer running in one step, before the client hears of it: a thread below
      // the engine's priority may be held up for long between two steps.
      std::lock_guard<std::mutex> lock(mu_);
      running_.erase(std::find(running_.begin(), running_.end(), job.cancelled));
      cpu_seconds_ += cpu;
      if (error) count_failure(error);
    }
    if (error) job.failed(error);
  }
}

std::exception_ptr GrammarService::run(Job& job) {
  const CompileBudget budget{limits_.budget_s, job.cancelled};
  try {
    if (job.cancelled->load()) throw CompileCancelled();  // gone while it waited
    job.work(budget);
    return nullptr;
  } catch (...) {
    return std::current_exception();
  }
}

void GrammarService::count_failure(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const CompileCancelled&) {
    ++cancelled_;
  } catch (const GrammarError& e) {
    if (e.construct() == "budget") ++over_budget_;
  } catch (...) {
  }
}

void GrammarService::cancel_all() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  for (const Job& j : waiting_) j.cancelled->store(true);
  for (const Flag& f : running_) f->store(true);
  cv_.notify_all();
}

void GrammarService::stop() {
  cancel_all();
  threads_.clear();  // joins: each compile stops at its next check
}

bool GrammarService::ready() const {
  return built_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

GrammarService::Stats GrammarService::stats() const {
  Stats s;
  if (ready()) s.cache = cache().stats();
  std::lock_guard<std::mutex> lock(mu_);
  s.cancelled = cancelled_;
  s.over_budget = over_budget_;
  s.refused = refused_;
  s.running = running_.size();
  s.cpu_seconds = cpu_seconds_;
  s.waiting = waiting_.size();
  return s;
}

double GrammarService::vocabulary_seconds() const { return built_.get()->seconds; }

}  // namespace exspec::grammar
