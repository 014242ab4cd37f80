// Property test against an independent validator: random walks through the matcher on the Llama 3
// vocabulary (random allowed tokens from the mask, an end token where allowed) write texts that
// Debian's python3-jsonschema validates against each of the benchmark's schemas
// (bench/grammar_schemas.json). Each schema's own example instance, tokenized by the tokenizer,
// is accepted token by token, every token inside the mask before it.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <random>

#include "grammar/json_schema.h"
#include "tests/grammar/canonical.h"
#include "tests/grammar/support.h"
#include "tests/grammar/tokenizers.h"

using namespace exspec::grammar;
using namespace exspec::grammar::test;
using Json = nlohmann::ordered_json;

TEST_CASE("random walks validate against every benchmark schema (python3-jsonschema)", "[grammar][property]") {
  std::ifstream in(std::string(EXSPEC_SOURCE_DIR) + "/bench/grammar_schemas.json");
  REQUIRE(in);
  const Json entries = Json::parse(in);
  const RealTokenizer& t = real_tokenizer("llama3");
  std::mt19937_64 rng(46);
  std::vector<Json> cases;
  size_t walks = 0, finished = 0;
  for (const Json& e : entries) {
    const std::string name = e["name"].get<std::string>();
    INFO(name);
    auto g = CompiledGrammar::compile(grammar_from_parsed_schema(e["schema"]), t.vocab);
    const std::string instance = canonical_text(e["schema"], e["instance"]);
    Matcher m(g);
    TokenBitset mask(t.vocab->size());
    for (int64_t id : t.tokenizer.encode(instance, false)) {
      m.fill_mask(mask);
      CHECK(mask.test(static_cast<size_t>(id)));
      REQUIRE(m.accept(static_cast<int32_t>(id)));
    }
    CHECK(m.can_end());
    cases.push_back(Json{{"name", name + " (example)"}, {"schema", e["schema"]}, {"text", instance}});
    for (int w = 0; w < 6; ++w, ++walks) {
      const auto tokens = random_walk(g, rng, 400);
      if (!tokens) continue;
      ++finished;
      std::string text;
      for (int32_t tok : *tokens) text += g->vocabulary().bytes(tok);
      cases.push_back(Json{{"name", name}, {"schema", e["schema"]}, {"text", text}});
    }
  }
  const Verdict v = validate_with_python(cases);
  INFO(v.report);
  CHECK(v.checked == cases.size());
  CHECK(v.invalid == 0);
  CHECK(finished * 10 >= walks * 7);  // most walks end within the budget
  std::printf("property: %zu walks, %zu finished; %zu texts validated by python3-jsonschema, %zu invalid\n", walks, finished,
              v.checked, v.invalid);
}
