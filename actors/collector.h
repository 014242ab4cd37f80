// A TokenSink that gathers whole results for many sequences and lets a thread wait for them:
// what the CLI and the tests use to drive the engine synchronously.
#pragma once
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>

#include "actors/engine.h"

namespace exspec {

class Collector : public TokenSink {
 public:
  void on_tokens(SeqId id, const std::vector<int64_t>& delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& s = streamed_[id];
    s.insert(s.end(), delta.begin(), delta.end());
  }
  void on_logprobs(SeqId id, const std::vector<TokenLogprob>& delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& s = streamed_logprobs_[id];
    s.insert(s.end(), delta.begin(), delta.end());
  }
  void on_finish(SeqId id, const SeqResult& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    results_[id] = r;
    cv_.notify_all();
  }
  // Waits until `n` sequences have finished; false on timeout.
  bool wait_for(size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return results_.size() >= n; });
  }
  std::map<SeqId, SeqResult> results() const {
    std::lock_guard<std::mutex> lock(mu_);
    return results_;
  }
  std::map<SeqId, std::vector<int64_t>> streamed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return streamed_;
  }
  std::map<SeqId, std::vector<TokenLogprob>> streamed_logprobs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return streamed_logprobs_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<SeqId, SeqResult> results_;
  std::map<SeqId, std::vector<int64_t>> streamed_;
  std::map<SeqId, std::vector<TokenLogprob>> streamed_logprobs_;
};

}  // namespace exspec
