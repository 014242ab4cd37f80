#include "grammar/grammar_cache.h"

#include "grammar/error.h"
#include "grammar/gbnf.h"

namespace exspec::grammar {

std::string GrammarRequest::canonical() const {
  std::string key = std::to_string(static_cast<int>(kind)) + (options.strict_objects ? "s" : "l") + ":";
  switch (kind) {
    case Kind::JsonSchema:
      try {
        return key + nlohmann::ordered_json::parse(text).dump();
      } catch (const std::exception& e) {
        throw GrammarError("schema", "#", std::string("JSON Schema: not valid JSON: ") + e.what());
      }
    case Kind::Choice: return key + nlohmann::json(choices).dump();
    case Kind::JsonObject: return key;
    case Kind::Regex:
    case Kind::Gbnf: return key + text;
  }
  return key + text;
}

Grammar to_grammar(const GrammarRequest& r) {
  switch (r.kind) {
    case GrammarRequest::Kind::JsonSchema: return grammar_from_json_schema(r.text, r.options);
    case GrammarRequest::Kind::JsonObject: return grammar_json_object();
    case GrammarRequest::Kind::Regex: return grammar_from_regex(r.text);
    case GrammarRequest::Kind::Choice: return grammar_from_choices(r.choices);
    case GrammarRequest::Kind::Gbnf: return parse_gbnf(r.text);
  }
  throw GrammarError("kind", "", "unknown grammar kind");
}

GrammarCache::GrammarCache(std::shared_ptr<const Vocabulary> vocab, size_t capacity)
    : vocab_(std::move(vocab)), capacity_(capacity == 0 ? 1 : capacity) {}

std::shared_ptr<const CompiledGrammar> GrammarCache::get(const GrammarRequest& r) {
  const std::string key = r.canonical();
  std::promise<std::shared_ptr<const CompiledGrammar>> promise;
  Future future;
  bool compile = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.age);
      ++stats_.hits;
      future = it->second.grammar;
    } else {
      future = promise.get_future().share();
      lru_.push_front(key);
      entries_.emplace(key, Entry{future, lru_.begin()});
      ++stats_.misses;
      compile = true;
    }
  }
  if (compile) {
    try {
      auto g = CompiledGrammar::compile(to_grammar(r), vocab_);
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.compile_seconds += g->compile_seconds();
        // Evict only now, so that a request that fails to compile evicts nothing. A compile in
        // flight keeps its own future: evicting its entry is safe.
        while (entries_.size() > capacity_) {
          entries_.erase(lru_.back());
          lru_.pop_back();
        }
      }
      promise.set_value(std::move(g));
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        lru_.erase(it->second.age);
        entries_.erase(it);
      }
    }
  }
  return future.get();
}

GrammarCache::Stats GrammarCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.entries = entries_.size();
  return s;
}

}  // namespace exspec::grammar
