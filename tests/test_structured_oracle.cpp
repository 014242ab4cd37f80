// Structured output under speculation (issue 46, model/constrained.h): with a grammar, every mode
// and proposer equals batch-1 plain decoding under the same grammar, token for token, in float64
// (greedy and seeded, B 1-16, K fixed and adaptive, constrained and free rows in one batch,
// pre-emption, the prefix cache); and every constrained output that ended is valid against its
// schema by Debian's python3-jsonschema. The reference masks each position's logits with a matcher
// fed only the tokens before it (model/oracle/plain_decode.cpp).
#include <catch2/catch.hpp>

#include <string>

#include "actors/scheduler/engine_config.h"
#include "actors/scheduler/proposer.h"
#include "actors/sequential_driver.h"
#include "grammar/grammar_cache.h"
#include "model/tokenizer/grammar_vocab.h"
#include "model/constrained.h"
#include "model/decoder.h"
#include "model/oracle/plain_decode.h"
#include "tests/grammar/support.h"
#include "tests/support.h"

using namespace exspec;

namespace {

// Schemas a tiny random model can finish within its budget: forced keys and separators, enums,
// bounded integers, booleans, short arrays and strings.
const char* const kSchemas[] = {
    R"({"type":"object","properties":{"answer":{"enum":["yes","no","maybe"]},"n":{"type":"integer","minimum":0,"maximum":99}},"required":["answer","n"]})",
    R"({"type":"boolean"})",
    R"({"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"maxItems":3})",
    R"({"type":"object","properties":{"id":{"type":"integer","minimum":1,"maximum":999},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"enum":["a","b"]},"maxItems":2}},"required":["id","ok","tags"],"additionalProperties":false})",
    R"({"type":"string","maxLength":4})",
};
constexpr size_t kNumSchemas = sizeof(kSchemas) / sizeof(kSchemas[0]);

struct Workload {
  std::vector<SeqRequest> reqs;
  std::vector<int> schema;  // per request: index into kSchemas, -1 free
  std::vector<SeqResult> want;
};

std::shared_ptr<grammar::GrammarCache> cache_for(const std::string& dir) {
  static std::shared_ptr<grammar::GrammarCache> c;
  if (!c) c = std::make_shared<grammar::GrammarCache>(grammar::tokenizer_vocabulary(Tokenizer::load(dir)), 16);
  return c;
}

// 16 requests: every fourth free (its stop token one the target emits early), the others under a
// schema; seeded sampling on most rows when `sampled`; a few budgets that end mid-value. Prompts
// share a 12-token prefix in pairs (the prefix cache finds it).
Workload workload(const Decoder& target, bool sampled) {
  const std::string dir = test::model_dir("llama");
  auto cache = cache_for(dir);
  const int64_t vocab = target.config().vocab_size;
  const auto own = test::mixed_prompts(16, 1, 10, vocab, 41);
  const auto shared = test::mixed_prompts(8, 12, 12, vocab, 42);
  Workload w;
  for (size_t i = 0; i < own.size(); ++i) {
    std::vector<int64_t> p = shared[i / 2];
    p.insert(p.end(), own[i].begin(), own[i].end());
    SeqRequest q{p, 48, {}};
    q.eos_ids = target.config().eos_ids;
    const int s = i % 4 == 3 ? -1 : static_cast<int>(i % kNumSchemas);
    if (s >= 0) q.grammar = cache->get(grammar::GrammarRequest::json_schema(kSchemas[s]));
    else q.max_tokens = 12;
    if (i % 7 == 5) q.max_tokens = 9;  // ends by length, mid-value
    if (sampled && i % 3 != 2) q.sampling.temperature = i % 2 ? 0.7 : 1.2, q.sampling.seed = 900 + i;
    w.reqs.push_back(std::move(q));
    w.schema.push_back(s);
  }
  w.want = plain_decode(target, w.reqs, 1);
  return w;
}

void check_equal(const std::vector<SeqResult>& got, const std::vector<SeqResult>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    CATCH_INFO("request " << i);
    CATCH_CHECK(got[i].tokens == want[i].tokens);
    CATCH_CHECK(got[i].finish == want[i].finish);
  }
}

// The reference's constrained outputs that ended, validated by python3-jsonschema; returns how
// many ended (the rest ended by length).
size_t validate(const Workload& w) {
  const grammar::Vocabulary& v = *cache_for(test::model_dir("llama"))->vocabulary();
  std::vector<nlohmann::ordered_json> cases;
  for (size_t i = 0; i < w.reqs.size(); ++i) {
    if (w.schema[i] < 0) continue;
    const SeqResult& r = w.want[i];
    CATCH_INFO("request " << i);
    CATCH_REQUIRE(r.finish != FinishReason::None);
    if (r.finish != FinishReason::Stop) continue;
    std::string text;
    for (int64_t t : r.tokens)
      if (!grammar_end_token(*w.reqs[i].grammar, t)) text += v.bytes(static_cast<int32_t>(t));
    CATCH_CHECK(grammar_end_token(*w.reqs[i].grammar, r.tokens.back()));
    cases.push_back({{"name", "request " + std::to_string(i)},
                     {"schema", nlohmann::ordered_json::parse(kSchemas[w.schema[i]])},
                     {"text", text}});
  }
  const grammar::test::Verdict verdict = grammar::test::validate_with_python(cases);
  CATCH_INFO(verdict.report);
  CATCH_CHECK(verdict.checked == cases.size());
  CATCH_CHECK(verdict.invalid == 0);
  return cases.size();
}

EngineConfig config(Mode mode, int64_t B, int64_t K, Speculate speculate = Speculate::Model) {
  EngineConfig c;
  c.mode = mode;
  c.speculate = speculate;
  c.batch_size = B;
  c.window = c.slots = B + (B % 3) * 2;
  c.prefill_chunk = B % 2 ? 5 : 64;
  c.draft_tokens = std::max<int64_t>(K, 1);
  c.adaptive_k = K < 0;
  return c;
}

}  // namespace

CATCH_TEST_CASE("structured output: the plain reference masks, and its outputs are valid", "[structured][oracle]") {
  auto target = test::load64(test::model_dir("llama"));
  for (bool sampled : {false, true}) {
    const Workload w = workload(*target, sampled);
    CATCH_INFO("sampled " << sampled);
    // Enough outputs ended inside their grammar for the validation to mean something.
    CATCH_CHECK(validate(w) >= 6);
    // Batched plain decoding under the grammar equals batch 1.
    check_equal(plain_decode(*target, w.reqs, 5), w.want);
  }
}

CATCH_TEST_CASE("structured output: every mode and proposer equals batch-1 plain decoding under the grammar",
                "[structured][oracle]") {
  auto target = test::load64(test::model_dir("llama"));
  auto draft = test::load64(test::truncated_draft());
  const uint64_t cut0 = grammar_step_stats().drafts_cut.load(), forced0 = grammar_step_stats().forced_proposed.load();
  int64_t forced_accepted = 0;
  for (bool sampled : {false, true}) {
    Workload w = workload(*target, sampled);
    for (size_t i = 0; i < w.reqs.size(); ++i)  // predictions: the answer, on every other row
      if (i % 2 == 0) w.reqs[i].prediction = w.want[i].tokens;
    struct Server {
      const char* name;
      Mode mode;
      bool with_draft;
      Speculate speculate;
    };
    for (const Server& s : {Server{"nonspec", Mode::NonSpec, false, Speculate::Model},
                            Server{"eqspec", Mode::EqSpec, true, Speculate::Model},
                            Server{"exspec", Mode::ExSpec, true, Speculate::Model},
                            Server{"in place, draft model", Mode::InPlace, true, Speculate::Model},
                            Server{"in place, ngram", Mode::InPlace, false, Speculate::Ngram},
                            Server{"in place, forced tokens and predictions", Mode::InPlace, false, Speculate::Model}}) {
      for (int64_t B : {1, 3, 8, 16}) {
        for (int64_t K : {1, 3, -1}) {
          if (s.mode == Mode::NonSpec && K != 1) continue;
          CATCH_INFO(s.name << ", sampled " << sampled << ", B " << B << ", K " << K);
          SequentialDriver engine(target, s.with_draft ? draft : nullptr, config(s.mode, B, K, s.speculate));
          check_equal(engine.run(w.reqs), w.want);
          forced_accepted += engine.stats().proposer_accepted[static_cast<int>(Proposer::Grammar)];
        }
      }
    }
  }
  CATCH_CHECK(grammar_step_stats().drafts_cut.load() > cut0);  // drafts outside the grammar were cut
  CATCH_CHECK(grammar_step_stats().forced_proposed.load() > forced0);  // forced tokens were proposed
  CATCH_CHECK(forced_accepted > 0);                                     // and accepted
}

CATCH_TEST_CASE("structured output: pre-emption and the prefix cache keep the matcher with the tokens",
                "[structured][oracle][inplace]") {
  auto target = test::load64(test::model_dir("llama"));
  auto draft = test::load64(test::truncated_draft());
  int64_t preempted = 0, hits = 0;
  for (bool sampled : {false, true}) {
    const Workload w = workload(*target, sampled);
    for (const auto& d : {std::shared_ptr<const Decoder>{}, draft}) {
      for (int64_t B : {2, 4, 8}) {
        for (bool short_memory : {true, false}) {
          EngineConfig c = config(Mode::InPlace, B, B == 8 ? -1 : 3);
          c.slots = std::max<int64_t>(B, 4);
          c.block_size = B == 2 ? 1 : 4;
          c.prefix_cache = true;
          const int64_t per_position = target->kv_bytes_per_position() + (d ? d->kv_bytes_per_position() : 0);
          if (short_memory) c.kv_cache_bytes = c.slots * 24 * per_position;  // fewer positions than the live sequences need
          CATCH_INFO("sampled " << sampled << ", draft " << (d != nullptr) << ", B " << B << ", short " << short_memory);
          SequentialDriver engine(target, d, c);
          check_equal(engine.run(w.reqs), w.want);
          preempted += engine.stats().preemptions;
          hits += engine.stats().prefix_hit;
        }
      }
    }
  }
  CATCH_CHECK(preempted > 0);
  CATCH_CHECK(hits > 0);
}
