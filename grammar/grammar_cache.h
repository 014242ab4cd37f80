// What a request asks for (a JSON Schema, any JSON object, a regular expression, a choice, a GBNF
// grammar), and the bounded cache that compiles each distinct one once: HTTP threads call get()
// concurrently; a second request for a grammar being compiled waits for that compile. Least
// recently used grammars leave first; matchers keep theirs alive.
#pragma once
#include <cstddef>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/budget.h"
#include "grammar/compiled_grammar.h"
#include "grammar/json_schema.h"

namespace exspec::grammar {

struct GrammarRequest {
  enum class Kind {
    JsonSchema, JsonObject, Regex, Choice, Gbnf,
    // Compositions (compose.h): a tool call's syntax around its arguments' schema.
    Literal,       // exactly `text`
    SpecialToken,  // the special token `token`
    Sequence,      // parts one after the other
    Alternatives,  // any one of parts
    Repeat,        // parts[0], then (parts[1] parts[0]) until min..max items (max < 0: unbounded)
  };
  Kind kind = Kind::JsonObject;
  std::string text;                  // the schema's JSON text, the regex, the GBNF grammar, the literal
  std::vector<std::string> choices;  // Kind::Choice
  JsonSchemaOptions options;
  int32_t token = -1;                // Kind::SpecialToken
  std::vector<GrammarRequest> parts;  // compositions
  int min = 1, max = -1;             // Kind::Repeat

  static GrammarRequest json_schema(std::string schema_text);
  static GrammarRequest literal(std::string text);
  static GrammarRequest special_token(int32_t id);
  static GrammarRequest sequence(std::vector<GrammarRequest> parts);
  static GrammarRequest alternatives(std::vector<GrammarRequest> parts);
  static GrammarRequest repeat(GrammarRequest item, GrammarRequest separator, int min, int max);

  // The cache key: equal for requests that compile to the same grammar (JSON text normalized).
  std::string canonical() const;  // throws GrammarError on a schema that is not JSON
};

// The request's grammar (throws GrammarError).
Grammar to_grammar(const GrammarRequest& r);

class GrammarCache {
 public:
  // At most `capacity` grammars, and (max_bytes > 0) at most max_bytes of them as compiled
  // (memory_bytes(); token sets computed later on first use are not counted); the least recently
  // used leave first, but the newest stays even when it alone is larger.
  explicit GrammarCache(std::shared_ptr<const Vocabulary> vocab, size_t capacity = 256, size_t max_bytes = 0);

  // The compiled grammar; throws GrammarError (errors are not cached). The compile runs on the
  // caller's thread within `budget` (budget.h): past its CPU seconds a GrammarError("budget"),
  // once cancelled CompileCancelled; neither leaves anything in the cache. A caller that waits
  // for another's compile of the same grammar stops waiting when its own flag is set, and
  // compiles it itself when that other compile was cancelled.
  std::shared_ptr<const CompiledGrammar> get(const GrammarRequest& r, const CompileBudget& budget = {});

  struct Stats {
    size_t hits = 0, misses = 0, entries = 0, bytes = 0;
    double compile_seconds = 0;
  };
  Stats stats() const;
  const std::shared_ptr<const Vocabulary>& vocabulary() const { return vocab_; }

 private:
  using Future = std::shared_future<std::shared_ptr<const CompiledGrammar>>;
  struct Entry {
    Future grammar;
    std::list<std::string>::iterator age;
    size_t bytes = 0;  // 0 while compiling
  };
  void erase(std::unordered_map<std::string, Entry>::iterator it);
  // One attempt: nullptr when it waited for a compile that was cancelled (try again).
  std::shared_ptr<const CompiledGrammar> attempt(const std::string& key, const GrammarRequest& r, const CompileBudget& budget);
  std::shared_ptr<const Vocabulary> vocab_;
  size_t capacity_, max_bytes_;
  mutable std::mutex mu_;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, Entry> entries_;
  Stats stats_;
};

}  // namespace exspec::grammar
