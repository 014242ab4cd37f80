#include "grammar/grammar_cache.h"

#include <chrono>

#include "grammar/compose.h"
#include "grammar/error.h"
#include "grammar/gbnf.h"

namespace exspec::grammar {

GrammarRequest GrammarRequest::json_schema(std::string schema_text) {
  GrammarRequest r;
  r.kind = Kind::JsonSchema;
  r.text = std::move(schema_text);
  return r;
}

GrammarRequest GrammarRequest::literal(std::string text) {
  GrammarRequest r;
  r.kind = Kind::Literal;
  r.text = std::move(text);
  return r;
}

GrammarRequest GrammarRequest::special_token(int32_t id) {
  GrammarRequest r;
  r.kind = Kind::SpecialToken;
  r.token = id;
  return r;
}

GrammarRequest GrammarRequest::sequence(std::vector<GrammarRequest> parts) {
  GrammarRequest r;
  r.kind = Kind::Sequence;
  r.parts = std::move(parts);
  return r;
}

GrammarRequest GrammarRequest::alternatives(std::vector<GrammarRequest> parts) {
  GrammarRequest r;
  r.kind = Kind::Alternatives;
  r.parts = std::move(parts);
  return r;
}

GrammarRequest GrammarRequest::repeat(GrammarRequest item, GrammarRequest separator, int min, int max) {
  GrammarRequest r;
  r.kind = Kind::Repeat;
  r.parts = {std::move(item), std::move(separator)};
  r.min = min;
  r.max = max;
  return r;
}

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
    case Kind::Gbnf:
    case Kind::Literal: return key + text;  // the whole key's tail: unambiguous
    case Kind::SpecialToken: return key + std::to_string(token);
    case Kind::Sequence:
    case Kind::Alternatives:
    case Kind::Repeat: {
      // Each part's key with its length in front, so that no two lists of parts read the same.
      key += std::to_string(min) + "," + std::to_string(max) + ":";
      for (const GrammarRequest& p : parts) {
        const std::string k = p.canonical();
        key += std::to_string(k.size()) + ":" + k;
      }
      return key;
    }
  }
  return key + text;
}

Grammar to_grammar(const GrammarRequest& r) {
  auto parts = [&r] {
    std::vector<Grammar> out;
    for (const GrammarRequest& p : r.parts) out.push_back(to_grammar(p));
    return out;
  };
  switch (r.kind) {
    case GrammarRequest::Kind::JsonSchema: return grammar_from_json_schema(r.text, r.options);
    case GrammarRequest::Kind::JsonObject: return grammar_json_object();
    case GrammarRequest::Kind::Regex: return grammar_from_regex(r.text);
    case GrammarRequest::Kind::Choice: return grammar_from_choices(r.choices);
    case GrammarRequest::Kind::Gbnf: return parse_gbnf(r.text);
    case GrammarRequest::Kind::Literal: return literal_grammar(r.text);
    case GrammarRequest::Kind::SpecialToken: return special_token_grammar(r.token);
    case GrammarRequest::Kind::Sequence: return concat(parts());
    case GrammarRequest::Kind::Alternatives: return one_of(parts());
    case GrammarRequest::Kind::Repeat: {
      if (r.parts.size() != 2) throw GrammarError("repetition", "", "a repetition has an item and a separator");
      const std::vector<Grammar> p = parts();
      return repeated(p[0], p[1], r.min, r.max);
    }
  }
  throw GrammarError("kind", "", "unknown grammar kind");
}

GrammarCache::GrammarCache(std::shared_ptr<const Vocabulary> vocab, size_t capacity, size_t max_bytes)
    : vocab_(std::move(vocab)), capacity_(capacity == 0 ? 1 : capacity), max_bytes_(max_bytes) {}

void GrammarCache::erase(std::unordered_map<std::string, Entry>::iterator it) {
  stats_.bytes -= it->second.bytes;
  lru_.erase(it->second.age);
  entries_.erase(it);
}

std::shared_ptr<const CompiledGrammar> GrammarCache::get(const GrammarRequest& r, const CompileBudget& budget) {
  const std::string key = r.canonical();
  for (;;)
    if (auto g = attempt(key, r, budget)) return g;
}

std::shared_ptr<const CompiledGrammar> GrammarCache::attempt(const std::string& key, const GrammarRequest& r,
                                                             const CompileBudget& budget) {
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
      BudgetScope scope(budget);
      auto g = CompiledGrammar::compile(to_grammar(r), vocab_);
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.compile_seconds += g->compile_seconds();
        if (auto it = entries_.find(key); it != entries_.end() && it->second.bytes == 0) {
          it->second.bytes = g->memory_bytes();
          stats_.bytes += it->second.bytes;
        }
        // Evict only now, so that a request that fails to compile evicts nothing. A compile in
        // flight keeps its own future: evicting its entry is safe.
        while (entries_.size() > 1 && (entries_.size() > capacity_ || (max_bytes_ > 0 && stats_.bytes > max_bytes_)))
          erase(entries_.find(lru_.back()));
      }
      promise.set_value(std::move(g));
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = entries_.find(key); it != entries_.end()) erase(it);
    }
  }
  if (!compile) {
    // Someone else's compile: wait for it while our own client is still there.
    while (future.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready)
      if (budget.cancelled && budget.cancelled->load()) throw CompileCancelled();
    try {
      return future.get();
    } catch (const CompileCancelled&) {
      return nullptr;  // its client went away, ours did not: compile it ourselves
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
