#include "http/grammar_service.h"

#include <chrono>

#include "model/tokenizer/grammar_vocab.h"

namespace exspec::http {

GrammarService::GrammarService(const Tokenizer& tokenizer, std::vector<int64_t> end_ids, size_t capacity, size_t max_bytes,
                               std::function<void(size_t, double)> on_built) {
  // A copy of the tokenizer shares its state (thread-safe); the thread owns what it reads.
  built_ = std::async(std::launch::async, [tokenizer, end_ids = std::move(end_ids), capacity, max_bytes, on_built = std::move(on_built)] {
             const auto t0 = std::chrono::steady_clock::now();
             auto b = std::make_shared<Built>();
             auto vocab = grammar::tokenizer_vocabulary(tokenizer, end_ids);
             const size_t tokens = vocab->size();
             b->cache = std::make_unique<grammar::GrammarCache>(std::move(vocab), capacity, max_bytes);
             b->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
             if (on_built) on_built(tokens, b->seconds);
             return b;
           }).share();
}

grammar::GrammarCache& GrammarService::cache() const { return *built_.get()->cache; }

std::shared_ptr<const grammar::CompiledGrammar> GrammarService::get(const grammar::GrammarRequest& r) {
  return cache().get(r);
}

bool GrammarService::ready() const {
  return built_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

grammar::GrammarCache::Stats GrammarService::stats() const { return ready() ? cache().stats() : grammar::GrammarCache::Stats{}; }

double GrammarService::vocabulary_seconds() const { return built_.get()->seconds; }

}  // namespace exspec::http
