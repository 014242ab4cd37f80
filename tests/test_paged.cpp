// The paged stores under a budget of a few blocks (model/block_pool.h, actors/scheduler_blocks.cpp):
// sequences outgrow their slots' rows and borrow blocks elsewhere (attention gathers them), the
// stores run out and newer sequences are pre-empted and recomputed, and every output still equals
// batch-1 nonspec decoding in float64, greedy and seeded, with a draft and without.
#include <catch2/catch.hpp>

#include "actors/engine_config.h"
#include "actors/sequential_driver.h"
#include "model/decoder.h"
#include "model/greedy.h"
#include "tests/support.h"

using namespace exspec;

CATCH_TEST_CASE("in place in a few blocks: borrowed blocks and pre-emptions equal batch-1 nonspec decoding",
                "[inplace][oracle][blocks]") {
  auto target = test::load64(test::model_dir("llama"));
  auto draft = test::load64(test::truncated_draft());
  const auto prompts = test::mixed_prompts(8, 3, 14, target->config().vocab_size, 91);
  std::vector<SeqRequest> reqs;
  for (size_t i = 0; i < prompts.size(); ++i) {
    reqs.push_back(SeqRequest{prompts[i], 10, {}});
    if (i % 3 == 1) reqs.back().sampling.temperature = 0.8, reqs.back().sampling.seed = 11 + i;
  }
  const auto want = greedy_generate(*target, reqs, 1);
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
