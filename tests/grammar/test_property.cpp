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

namespace {

std::vector<int32_t> allowed(const TokenBitset& mask) {
  std::vector<int32_t> out;
  for (size_t w = 0; w < mask.num_words(); ++w)
    for (uint64_t b = mask.words()[w]; b; b &= b - 1) out.push_back(static_cast<int32_t>(w * 64 + __builtin_ctzll(b)));
  return out;
}

// A random text of the grammar, or "" when the walk ran out of steps. Half the picks prefer
// tokens with a closing byte, so that strings and arrays end before the budget.
std::string random_walk(const std::shared_ptr<const CompiledGrammar>& g, std::mt19937_64& rng, int budget) {
  const Vocabulary& v = g->vocabulary();
  Matcher m(g);
  TokenBitset mask(v.size());
  std::string text;
  for (int step = 0; step < budget; ++step) {
    m.fill_mask(mask);
    const std::vector<int32_t> all = allowed(mask);
    REQUIRE(!all.empty());
    std::vector<int32_t> ends, closing;
    for (int32_t t : all) {
      if (v.kind(t) == TokenKind::End) ends.push_back(t);
      else if (v.bytes(t).find_first_of("\"]},") != std::string::npos) closing.push_back(t);
    }
    const std::vector<int32_t>& pool = !ends.empty() && rng() % 4 != 0 ? ends : (!closing.empty() && rng() % 2 ? closing : all);
    const int32_t t = pool[rng() % pool.size()];
    REQUIRE(m.accept(t));
    if (v.kind(t) == TokenKind::End) return text;
    text += v.bytes(t);
  }
  return "";
}

struct Verdict {
  size_t checked = 0, invalid = 0;
  std::string report;
};

Verdict validate(const std::vector<Json>& cases) {
  const std::string path = "grammar_property_cases.jsonl";
  {
    std::ofstream out(path);
    for (const Json& c : cases) out << c.dump() << "\n";
  }
  const std::string cmd = "/usr/bin/python3 " + std::string(EXSPEC_GRAMMAR_TEST_DIR) + "/validate.py " + path;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  REQUIRE(pclose(p) == 0);
  const Json r = Json::parse(out);
  return {r["checked"].get<size_t>(), r["invalid_count"].get<size_t>(), r["invalid"].dump(1)};
}

}  // namespace

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
      const std::string text = random_walk(g, rng, 400);
      if (text.empty()) continue;
      ++finished;
      cases.push_back(Json{{"name", name}, {"schema", e["schema"]}, {"text", text}});
    }
  }
  const Verdict v = validate(cases);
  INFO(v.report);
  CHECK(v.checked == cases.size());
  CHECK(v.invalid == 0);
  CHECK(finished * 10 >= walks * 7);  // most walks end within the budget
  std::printf("property: %zu walks, %zu finished; %zu texts validated by python3-jsonschema, %zu invalid\n", walks, finished,
              v.checked, v.invalid);
}
