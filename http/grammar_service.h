// The served model's grammars: its vocabulary as the grammar engine sees it (the target's
// tokenizer, with the model's EOS and the chat template's end of turn as end tokens), built once
// on a background thread so that the server never waits for it, and the bounded cache of compiled
// grammars (grammar_cache entries, grammar_cache_memory bytes). A request that needs a grammar
// before the vocabulary is built waits for it (docs/structured-output.md has the costs).
// Torch-free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <vector>

#include "grammar/grammar_cache.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec::http {

class GrammarService {
 public:
  // on_built (optional) runs on the building thread when the vocabulary is ready: its size and
  // the seconds it took (the log line).
  GrammarService(const Tokenizer& tokenizer, std::vector<int64_t> end_ids, size_t capacity, size_t max_bytes = 0,
                 std::function<void(size_t tokens, double seconds)> on_built = nullptr);

  // The compiled grammar, from the cache or compiled now (on the caller's thread). Throws
  // grammar::GrammarError.
  std::shared_ptr<const grammar::CompiledGrammar> get(const grammar::GrammarRequest& r);
  // Cache statistics (zeros while the vocabulary is being built).
  grammar::GrammarCache::Stats stats() const;
  bool ready() const;
  // The vocabulary's build time in seconds (waits for it).
  double vocabulary_seconds() const;

 private:
  struct Built {
    std::unique_ptr<grammar::GrammarCache> cache;
    double seconds = 0;
  };
  grammar::GrammarCache& cache() const;
  std::shared_future<std::shared_ptr<Built>> built_;
};

}  // namespace exspec::http
