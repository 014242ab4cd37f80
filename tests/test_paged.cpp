// The paged stores under a budget of a few blocks (actors/scheduler/block_pool.h, actors/scheduler/block_manager.cpp):
// sequences outgrow their slots' rows and borrow blocks elsewhere (attention gathers them), the
// stores run out and newer sequences are pre-empted and recomputed, and every output still equals
// batch-1 nonspec decoding in float64, greedy and seeded, with a draft and without.
#include <catch2/catch.hpp>

#include "actors/scheduler/engine_config.h"
#include "actors/sequential_driver.h"
#include "model/decoder.h"
#include "model/oracle/plain_decode.h"
#include "model/runtime.h"
#include "tests/support.h"

using namespace exspec;

namespace {

// Sequences borrow blocks beyond their slots' rows and are pre-empted when the stores run out;
// every output equals `target`'s batch-1 nonspec decoding, greedy and seeded.
void preemption_sweep(const std::shared_ptr<const Decoder>& target, const std::shared_ptr<const Decoder>& draft) {
  const auto prompts = test::mixed_prompts(8, 3, 14, target->config().vocab_size, 91);
  std::vector<SeqRequest> reqs;
  for (size_t i = 0; i < prompts.size(); ++i) {
    reqs.push_back(SeqRequest{prompts[i], 10, {}});
    if (i % 3 == 1) reqs.back().sampling.temperature = 0.8, reqs.back().sampling.seed = 11 + i;
  }
  const auto want = plain_decode(*target, reqs, 1);
  int64_t preempted = 0, gathered = 0;
  for (const auto& d : {std::shared_ptr<const Decoder>{}, draft}) {
    for (int64_t block : {1, 4}) {
      for (int64_t B : {2, 4}) {
        EngineConfig c;
        c.mode = Mode::InPlace;
        c.batch_size = B;
        c.slots = 4;
        c.block_size = block;
        c.adaptive_k = false;
        c.draft_tokens = 3;
        // Rows of 10 positions (8 in blocks of 4): two or three of these sequences fill the stores.
        const int64_t per_position = target->kv_bytes_per_position() + (d ? d->kv_bytes_per_position() : 0);
        c.kv_cache_bytes = c.slots * 10 * per_position;
        SequentialDriver engine(target, d, c);
        const auto got = engine.run(reqs);
        CATCH_INFO("draft " << (d != nullptr) << ", block " << block << ", B " << B);
        for (size_t i = 0; i < reqs.size(); ++i) {
          CATCH_CHECK(got[i].tokens == want[i].tokens);
          CATCH_CHECK(got[i].finish == want[i].finish);
        }
        preempted += engine.stats().preemptions;
        gathered += engine.stats().gathered_steps;
      }
    }
  }
  // The budget really was short: sequences went back to the queue, and keys were gathered.
  CATCH_CHECK(preempted > 0);
  CATCH_CHECK(gathered > 0);
}

}  // namespace

CATCH_TEST_CASE("in place in a few blocks: borrowed blocks and pre-emptions equal batch-1 nonspec decoding",
                "[inplace][oracle][blocks]") {
  preemption_sweep(test::load64(test::model_dir("llama")), test::load64(test::truncated_draft()));
}

// int8 and bfloat16 (issue 47): pre-emption recomputes a sequence in other batches, chunks and
// blocks, and its output is still that dtype's batch-1 nonspec decoding.
CATCH_TEST_CASE("in place in a few blocks in float32, int8 and bfloat16: pre-emptions equal batch-1 nonspec decoding",
                "[inplace][oracle][blocks][int8]") {
  for (at::ScalarType dt : test::invariant_dtypes()) {
    CATCH_INFO(dtype_name(dt));
    preemption_sweep(test::load_as(test::model_dir("llama"), dt), test::load_as(test::truncated_draft(), dt));
  }
}

CATCH_TEST_CASE("in place in a few blocks on Q4_K and Q6_K GGUFs: pre-emptions equal batch-1 nonspec decoding",
                "[inplace][oracle][blocks][int8][kquant]") {
  for (const char* type : {"q4_k", "q6_k"}) {
    CATCH_INFO(type);
    preemption_sweep(test::load_as(test::kquant_gguf(type), at::kChar), test::load_as(test::kquant_gguf(type, true), at::kChar));
  }
}

namespace {

// n requests after a shared 21-token system prompt, each with `own` tokens of its own: the
// first asks for first_max tokens and arrives at once, the others for rest_max at step `later`.
struct Workload {
  std::vector<SeqRequest> reqs;
  Timeline t;
};
Workload shared_prompt(int64_t vocab, uint64_t seed, int n, int own, int64_t first_max, int64_t rest_max, int64_t later) {
  const std::vector<int64_t> system = test::mixed_prompts(1, 21, 21, vocab, seed)[0];
  Workload w;
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t> p = system;
    for (int k = 0; k < own; ++k) p.push_back((11 * i + 7 * k + 5) % vocab);
    w.reqs.push_back(SeqRequest{p, i == 0 ? first_max : rest_max, {}});
    w.t.arrive_at.push_back(i == 0 ? 0 : later);
  }
  return w;
}

// In place, B = slots, blocks of 4 positions.
EngineConfig paged(int64_t slots) {
  EngineConfig c;
  c.mode = Mode::InPlace;
  c.batch_size = c.slots = slots;
  c.block_size = 4;
  return c;
}

}  // namespace

CATCH_TEST_CASE("in place: a prefix cached in another slot's blocks is copied into the newcomer's own, output unchanged",
                "[inplace][oracle][blocks][prefix]") {
  auto target = test::load64(test::model_dir("llama"));
  auto draft = test::load64(test::truncated_draft());
  // A shared system prompt: one request with it ends; three more arrive together. The first
  // takes the slot whose blocks hold it; the others find it in a taken slot's row and have it
  // copied into the blocks of free slots that cache nothing.
  const Workload w = shared_prompt(target->config().vocab_size, 97, 4, 2, 4, 12, 40);
  const auto want = plain_decode(*target, w.reqs, 1);
  for (const auto& d : {std::shared_ptr<const Decoder>{}, draft}) {
    EngineConfig c = paged(8);
    c.adaptive_k = false;
    c.draft_tokens = 2;
    SequentialDriver engine(target, d, c);
    const auto got = engine.run(w.reqs, w.t);
    CATCH_INFO("draft " << (d != nullptr));
    for (size_t i = 0; i < w.reqs.size(); ++i) CATCH_CHECK(got[i].tokens == want[i].tokens);
    const RunStats& st = engine.stats();
    CATCH_CHECK(st.prefix_hit >= 3 * 20);     // each newcomer found the system prompt's 5 blocks
    CATCH_CHECK(st.prefix_copied >= 2 * 5);   // two of them copied them into their own
    CATCH_CHECK(st.gathered_steps == 0);      // and every step read its keys as a view
  }
}

CATCH_TEST_CASE("in place: newcomers take the blocks a running sequence has stored, output unchanged",
                "[inplace][oracle][blocks][prefix]") {
  auto target = test::load64(test::model_dir("llama"));
  auto draft = test::load64(test::truncated_draft());
  // A system prompt's first user is still decoding when two more arrive with it: its full blocks
  // were published after its prefill, so they are found without waiting for it to end.
  Workload w = shared_prompt(target->config().vocab_size, 101, 3, 1, 80, 10, 4);
  w.reqs[2].sampling.temperature = 0.9, w.reqs[2].sampling.seed = 5;
  const auto want = plain_decode(*target, w.reqs, 1);
  for (const auto& d : {std::shared_ptr<const Decoder>{}, draft}) {
    for (bool cache : {true, false}) {
      EngineConfig c = paged(4);
      c.prefix_cache = cache;
      SequentialDriver engine(target, d, c);
      const auto got = engine.run(w.reqs, w.t);
      CATCH_INFO("draft " << (d != nullptr) << ", cache " << cache);
      for (size_t i = 0; i < w.reqs.size(); ++i) CATCH_CHECK(got[i].tokens == want[i].tokens);
      CATCH_CHECK(engine.trace().max_active >= 3);  // the first was still running
      if (cache) CATCH_CHECK(engine.stats().prefix_hit >= 2 * 20);
      else CATCH_CHECK(engine.stats().prefix_hit == 0);
    }
  }
}
