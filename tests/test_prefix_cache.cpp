// Exact prefix caching over the paged stores' blocks (actors/scheduler/block_pool.h): conversations whose
// every turn resends the history, arriving after the turn before ended, equal batch-1 nonspec
// decoding in float64 (greedy and seeded, with a draft and without, B 1-8, blocks of 1 to 16
// positions, few slots so that cached prefixes are evicted too), with the cache on and off; the
// cache really serves prompts.
#include <catch2/catch.hpp>

#include "actors/scheduler/engine_config.h"
#include "actors/sequential_driver.h"
#include "model/decoder.h"
#include "model/oracle/plain_decode.h"
#include "model/runtime.h"
#include "tests/support.h"

using namespace exspec;

namespace {

struct Conversations {
  std::vector<SeqRequest> requests;  // turn by turn: conversation c's turn t at index t * C + c
  std::vector<SeqResult> want;
  Timeline arrivals;
};

// C conversations of T turns: turn t's prompt is turn t - 1's prompt, its answer and a few new
// tokens (none for conversation 0: its prompt is exactly the last sequence's tokens). Turn t
// arrives at step 14 t, after turn t - 1 ended; a stranger without shared prefix arrives with it.
Conversations conversations(const Decoder& target, int C, int T, bool sampled) {
  Conversations w;
  const int64_t vocab = target.config().vocab_size;
  auto firsts = test::mixed_prompts(C + T, 3, 12, vocab, 71);
  std::vector<SeqRequest> turn;
  for (int c = 0; c < C; ++c) turn.push_back(SeqRequest{firsts[c], 8 + c % 3, {}});
  for (int t = 0; t < T; ++t) {
    turn.push_back(SeqRequest{firsts[C + t], 6, {}});  // the stranger
    for (size_t i = 0; i < turn.size(); ++i) {
      if (sampled && i % 2 == 0) turn[i].sampling.temperature = 0.9, turn[i].sampling.seed = 40 + 7 * t + i;
    }
    const auto got = plain_decode(target, turn, 1);
    for (size_t i = 0; i < turn.size(); ++i) {
      w.requests.push_back(turn[i]);
      w.want.push_back(got[i]);
      w.arrivals.arrive_at.push_back(14 * t);
    }
    turn.pop_back();
    for (int c = 0; c < C; ++c) {
      std::vector<int64_t>& p = turn[static_cast<size_t>(c)].prompt;
      p.insert(p.end(), got[static_cast<size_t>(c)].tokens.begin(), got[static_cast<size_t>(c)].tokens.end());
      for (int k = 0; k < c % 3; ++k) p.push_back((7 * t + 3 * k + c) % vocab);
    }
  }
  return w;
}

// Multi-turn conversations through the prefix cache, on and off, equal `target`'s batch-1
// nonspec decoding, greedy and seeded, with `draft` and without.
void conversation_sweep(const std::shared_ptr<const Decoder>& target, const std::shared_ptr<const Decoder>& draft) {
  for (bool sampled : {false, true}) {
    const Conversations w = conversations(*target, 4, 3, sampled);
    for (const auto& d : {std::shared_ptr<const Decoder>{}, draft}) {
      for (int64_t B : {1, 2, 3, 8}) {
        for (bool cache : {true, false}) {
          EngineConfig c;
          c.mode = Mode::InPlace;
          c.batch_size = B;
          c.slots = B + 2;  // few slots: some cached prefixes are overwritten before their next turn
          c.prefill_chunk = B % 2 ? 4 : 64;
          c.adaptive_k = B % 2 == 0;
          c.prefix_cache = cache;
          // Blocks of 1 to 4 positions split prompts, answers and drafts mid-way; 16 is the default.
          c.block_size = B == 8 ? 16 : (B == 1 ? 1 : B + 1);
          SequentialDriver engine(target, d, c);
          const auto got = engine.run(w.requests, w.arrivals);
          CATCH_INFO("sampled " << sampled << ", draft " << (d != nullptr) << ", B " << B << ", cache " << cache
                                << ", block " << c.block_size);
          for (size_t i = 0; i < w.want.size(); ++i) {
            CATCH_CHECK(got[i].tokens == w.want[i].tokens);
            CATCH_CHECK(got[i].finish == w.want[i].finish);
          }
          const RunStats& st = engine.stats();
          CATCH_CHECK(st.prefix_hit <= st.prefix_queried);
          if (!cache) CATCH_CHECK(st.prefix_hit == 0);
          // Later turns find their history: at least the conversations that kept their slot.
          if (cache && B >= 3) CATCH_CHECK(st.prefix_hit > 0);
        }
      }
    }
  }
}

}  // namespace

CATCH_TEST_CASE("in place with the prefix cache equals batch-1 nonspec decoding over multi-turn conversations",
                "[inplace][oracle][prefix]") {
  conversation_sweep(test::load64(test::model_dir("llama")), test::load64(test::truncated_draft()));
}

// int8 and bfloat16 (issue 47): a cached prefix's keys were computed in another batch and chunk;
// the output is still that dtype's batch-1 nonspec decoding.
CATCH_TEST_CASE("in place with the prefix cache in float32, int8 and bfloat16 equals batch-1 nonspec decoding",
                "[inplace][oracle][prefix][int8]") {
  for (at::ScalarType dt : test::invariant_dtypes()) {
    CATCH_INFO(dtype_name(dt));
    conversation_sweep(test::load_as(test::model_dir("llama"), dt), test::load_as(test::truncated_draft(), dt));
  }
}

CATCH_TEST_CASE("in place with the prefix cache on Q4_K and Q6_K GGUFs equals batch-1 nonspec decoding",
                "[inplace][oracle][prefix][int8][kquant]") {
  for (const char* type : {"q4_k", "q6_k"}) {
    CATCH_INFO(type);
    conversation_sweep(test::load_as(test::kquant_gguf(type), at::kChar), test::load_as(test::kquant_gguf(type, true), at::kChar));
  }
}

CATCH_TEST_CASE("in place: the same prompts again, whole in their slots, decode without a prefill", "[inplace][oracle][prefix]") {
  auto target = test::load64(test::model_dir("llama"));
  auto draft = test::load64(test::truncated_draft());
  auto prompts = test::mixed_prompts(8, 20, 30, target->config().vocab_size, 83);
  std::vector<SeqRequest> reqs;
  for (const auto& p : prompts) reqs.push_back(SeqRequest{p, 4, {}});
  for (const auto& p : prompts) reqs.push_back(SeqRequest{p, 12, {}});
  const auto want = plain_decode(*target, reqs, 1);
  for (const auto& d : {std::shared_ptr<const Decoder>{}, draft}) {
    for (bool adaptive : {false, true}) {
      EngineConfig c;
      c.mode = Mode::InPlace;
      c.batch_size = 8;
      c.slots = 16;
      c.adaptive_k = adaptive;
      c.block_size = adaptive ? 1 : 5;  // whole blocks are cached: every position but pending, or fewer
      SequentialDriver engine(target, d, c);
      Timeline t;
      for (size_t i = 0; i < reqs.size(); ++i) t.arrive_at.push_back(i < 8 ? 0 : 40);  // after the first 8 ended
      const auto got = engine.run(reqs, t);
      CATCH_INFO("draft " << (d != nullptr) << ", adaptive " << adaptive);
      for (size_t i = 0; i < reqs.size(); ++i) CATCH_CHECK(got[i].tokens == want[i].tokens);
      int64_t cached = 0;  // of each repeated prompt, the whole blocks before its pending token
      for (const auto& p : prompts) cached += (static_cast<int64_t>(p.size()) - 1) / c.block_size * c.block_size;
      CATCH_CHECK(engine.stats().prefix_hit >= cached);
      CATCH_CHECK(cached >= 8 * 15);
    }
  }
}
