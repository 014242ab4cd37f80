// What a compile may cost (grammar/budget.h, issue 55): counts that would expand past the
// automaton's state budget are refused by keyword and path before anything is built; a compile
// over its CPU budget or cancelled stops, and leaves nothing in the cache; a caller that waited
// for a cancelled compile of the same grammar compiles it itself.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "grammar/budget.h"
#include "grammar/error.h"
#include "grammar/gbnf.h"
#include "grammar/grammar_cache.h"
#include "grammar/json_schema.h"
#include "tests/grammar/support.h"

using namespace exspec::grammar;
using namespace exspec::grammar::test;

namespace {

// The GrammarError of compiling the schema (fails when it compiles).
GrammarError schema_error(const std::string& text) {
  try {
    compile_schema(text);
  } catch (const GrammarError& e) {
    return e;
  }
  FAIL("compiled: " << text);
  return GrammarError("", "", "");
}

// n strings of distinct maxLength near the state budget: allowed by every bound, and costly
// (about 0.07 s each on the byte vocabulary).
std::string costly_schema(int n) {
  std::string props;
  for (int i = 0; i < n; ++i)
    props += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\":{\"type\":\"string\",\"maxLength\":" + std::to_string(400 + i) + "}";
  return R"({"type":"object","properties":{)" + props + "}}";
}

}  // namespace

TEST_CASE("bounds before work: each expanding count is refused by keyword and path", "[grammar][budget]") {
  struct Case {
    const char* schema;
    const char* construct;
    const char* where;
  };
  const Case cases[] = {
      {R"({"type":"array","items":{"type":"integer"},"minItems":100000})", "minItems", "#/minItems"},
      {R"({"type":"array","items":{"type":"integer"},"minItems":1e10})", "minItems", "#/minItems"},
      {R"({"type":"array","items":{"type":"integer"},"maxItems":10000000})", "maxItems", "#/maxItems"},
      {R"({"type":"array","items":{"type":"integer"},"minItems":10000})", "minItems", "#/minItems"},  // 2C+1 > 20000
      {R"({"type":"array","items":{"type":"array","minItems":50000}})", "minItems", "#/items/minItems"},
      {R"({"type":"string","minLength":10000000})", "minLength", "#/minLength"},
      {R"({"type":"string","minLength":4294967297})", "minLength", "#/minLength"},  // was a wrapped int
      {R"({"type":"string","minLength":3,"maxLength":10000})", "maxLength", "#/maxLength"},
      {R"({"type":"object","properties":{"a b":{"type":"string","maxLength":100000}}})", "maxLength", "#/properties/a b/maxLength"},
      {R"({"type":"string","pattern":"^(ab{300}){300}$"})", "quantifier", "#/pattern, offset 15"},
      {R"({"type":"object","minProperties":1000000})", "minProperties", "#/minProperties"},
  };
  for (const Case& c : cases) {
    INFO(c.schema);
    const GrammarError e = schema_error(c.schema);
    INFO(e.what());
    CHECK(e.construct() == c.construct);
    CHECK(e.where() == c.where);
  }
  // A prefixItems list counts as its elements do.
  std::string prefix = R"({"type":"array","prefixItems":[)";
  for (int i = 0; i < 10000; ++i) prefix += i ? ",true" : "true";
  const GrammarError e = schema_error(prefix + "]}");
  CHECK(e.construct() == "prefixItems");
  CHECK(e.where() == "#/prefixItems");
  // Regular expressions and GBNF: a count, and a product of nested counts, refused where they stand.
  CHECK_THROWS_WITH(compile_regex("(a{200}){200}"), Catch::Contains("repetition too large") && Catch::Contains("offset 13"));
  CHECK_THROWS_WITH(compile_gbnf("root ::= (\"ab\"{300}){300}"), Catch::Contains("repetition too large"));
}

TEST_CASE("bounds: counts within them compile, flat (no stack overflow), with the right language", "[grammar][budget]") {
  // maxItems 3000 was thousands of nested levels deep and overflowed the stack.
  auto g = compile_schema(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":9000})");
  std::string three = "[1,2,3]", many = "[";
  for (int i = 0; i < 9000; ++i) many += i ? ",7" : "7";
  CHECK(full_match(g, three));
  CHECK(full_match(g, many + "]"));
  CHECK_FALSE(full_match(g, many + ",7]"));
  CHECK_FALSE(full_match(g, "[1]"));
  auto p = compile_schema(R"({"type":"array","prefixItems":[{"type":"boolean"}],"items":{"type":"integer"},"minItems":3,"maxItems":4})");
  CHECK(full_match(p, "[true,1,2]"));
  CHECK(full_match(p, "[true,1,2,3]"));
  CHECK_FALSE(full_match(p, "[true,1]"));
  CHECK_FALSE(full_match(p, "[true,1,2,3,4]"));
  CHECK_FALSE(full_match(p, "[1,2,3]"));
  auto closed = compile_schema(R"({"type":"array","prefixItems":[{"type":"boolean"},{"type":"null"}],"items":false,"maxItems":1})");
  CHECK(full_match(closed, "[]"));
  CHECK(full_match(closed, "[true]"));
  CHECK_FALSE(full_match(closed, "[true,null]"));
  // minLength above maxLength: no string fits (it used to mean exactly minLength characters).
  CHECK(schema_error(R"({"type":"string","minLength":5,"maxLength":3})").construct() == "empty");
}

TEST_CASE("budget: a compile over its CPU seconds stops with a 'budget' error and caches nothing", "[grammar][budget]") {
  GrammarCache cache(byte_vocab(), 8);
  const GrammarRequest r = GrammarRequest::json_schema(costly_schema(40));
  const double cpu0 = thread_cpu_seconds();
  try {
    cache.get(r, CompileBudget{0.2, nullptr});
    FAIL("compiled within 0.2 s");
  } catch (const GrammarError& e) {
    CHECK(e.construct() == "budget");
    CHECK_THAT(e.what(), Catch::Contains("--grammar-compile-budget"));
  }
  WARN("a 0.2 s budget stopped the compile after " << thread_cpu_seconds() - cpu0 << " s of CPU");
  CHECK(cache.stats().entries == 0);
  // Within a larger budget the same grammar compiles: nothing of the stopped one was kept.
  CHECK(cache.get(GrammarRequest::json_schema(costly_schema(2)), CompileBudget{30, nullptr}) != nullptr);
}

TEST_CASE("budget: a cancelled compile stops at its next check, and a waiter for it compiles it itself", "[grammar][budget]") {
  GrammarCache cache(byte_vocab(), 8);
  const GrammarRequest r = GrammarRequest::json_schema(costly_schema(12));
  auto flag = std::make_shared<std::atomic<bool>>(true);
  CHECK_THROWS_AS(cache.get(r, CompileBudget{0, flag}), CompileCancelled);  // cancelled before it began
  CHECK(cache.stats().entries == 0);

  // One compile cancelled while another caller waits for the same grammar: the waiter gets it.
  flag->store(false);
  std::shared_ptr<const CompiledGrammar> waited;
  std::atomic<bool> first_cancelled{false};
  std::thread first([&] {
    try {
      cache.get(r, CompileBudget{0, flag});
    } catch (const CompileCancelled&) {
      first_cancelled = true;
    }
  });
  while (cache.stats().misses < 2) std::this_thread::yield();  // the first compile has begun
  std::thread second([&] { waited = cache.get(r, CompileBudget{}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  flag->store(true);
  first.join();
  second.join();
  CHECK(first_cancelled);
  REQUIRE(waited != nullptr);
  CHECK(full_match(waited, R"({"p0":"x"})"));
  CHECK(cache.stats().entries == 1);
}
