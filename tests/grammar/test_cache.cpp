// The compiled-grammar cache: one compile per distinct request, also when threads ask at once;
// least recently used entries leave first; errors are not cached.
#include <catch2/catch.hpp>

#include <thread>

#include "grammar/error.h"
#include "grammar/grammar_cache.h"
#include "tests/grammar/support.h"

using namespace exspec::grammar;
using namespace exspec::grammar::test;

namespace {

GrammarRequest schema(const std::string& text) {
  GrammarRequest r;
  r.kind = GrammarRequest::Kind::JsonSchema;
  r.text = text;
  return r;
}

}  // namespace

TEST_CASE("the cache compiles each distinct grammar once, under concurrent requests", "[grammar][cache]") {
  GrammarCache cache(byte_vocab(), 8);
  std::vector<std::shared_ptr<const CompiledGrammar>> got(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] { got[i] = cache.get(schema(i % 2 ? R"({"type": "integer"})" : R"({"type":"integer"})")); });
  for (std::thread& t : threads) t.join();
  for (const auto& g : got) CHECK(g == got[0]);  // whitespace in the schema text does not matter
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().hits == 7);
  CHECK(full_match(got[0], "-12"));
}

TEST_CASE("the cache keeps the most recently used grammars and caches no errors", "[grammar][cache]") {
  GrammarCache cache(byte_vocab(), 2);
  GrammarRequest a = schema(R"({"type":"string"})"), b = schema(R"({"type":"boolean"})"), c;
  c.kind = GrammarRequest::Kind::Regex;
  c.text = "[0-9]+";
  auto ga = cache.get(a);
  cache.get(b);
  CHECK(cache.get(a) == ga);  // a is now the most recent
  cache.get(c);               // evicts b
  CHECK(cache.stats().entries == 2);
  CHECK(cache.get(a) == ga);
  const size_t misses = cache.stats().misses;
  cache.get(b);
  CHECK(cache.stats().misses == misses + 1);
  GrammarRequest bad = schema(R"({"not":{}})");
  CHECK_THROWS_AS(cache.get(bad), GrammarError);
  CHECK_THROWS_AS(cache.get(bad), GrammarError);
  CHECK(cache.stats().entries == 2);
  CHECK_THROWS_AS(cache.get(schema("{oops")), GrammarError);
  GrammarRequest choice;
  choice.kind = GrammarRequest::Kind::Choice;
  choice.choices = {"yes", "no"};
  auto gc = cache.get(choice);
  CHECK(full_match(gc, "no"));
  CHECK_FALSE(full_match(gc, "maybe"));
  GrammarRequest gbnf;
  gbnf.kind = GrammarRequest::Kind::Gbnf;
  gbnf.text = "root ::= \"a\" | \"b\"";
  CHECK(full_match(cache.get(gbnf), "b"));
  GrammarRequest any;
  any.kind = GrammarRequest::Kind::JsonObject;
  auto go = cache.get(any);
  CHECK(full_match(go, R"({"a":[1,{"b":null}]})"));
  CHECK_FALSE(full_match(go, "[]"));
}

TEST_CASE("the cache keeps its grammars within a memory budget, the newest always", "[grammar][cache]") {
  auto v = byte_vocab();
  const size_t one = GrammarCache(v).get(schema(R"({"type":"string","maxLength":40})"))->memory_bytes();
  REQUIRE(one > 0);
  GrammarCache cache(v, 100, 2 * one + one / 2);  // room for two such grammars, not three
  for (int n : {40, 41, 42}) cache.get(schema(R"({"type":"string","maxLength":)" + std::to_string(n) + "}"));
  CHECK(cache.stats().entries == 2);
  CHECK(cache.stats().bytes <= 2 * one + one / 2);
  const size_t misses = cache.stats().misses;
  cache.get(schema(R"({"type":"string","maxLength":42})"));  // kept: the most recent
  CHECK(cache.stats().misses == misses);
  cache.get(schema(R"({"type":"string","maxLength":40})"));  // evicted first
  CHECK(cache.stats().misses == misses + 1);
  GrammarCache tiny(v, 100, 1);  // smaller than any grammar: the newest stays alone
  tiny.get(schema(R"({"type":"string","maxLength":40})"));
  tiny.get(schema(R"({"type":"string","maxLength":41})"));
  CHECK(tiny.stats().entries == 1);
  CHECK(tiny.stats().bytes > 1);
}
