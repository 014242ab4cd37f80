// Planning ahead (actors/scheduler/plan_ahead.h) at the engine: the tokens with plan_ahead on
// equal those with it off, in float64 and float32, greedy and seeded, at B 1, 3 and 8, and under
// a KV budget that pre-empts; with it on, steps planned ahead were kept and others made again.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <vector>

#include "actors/scheduler/engine_config.h"
#include "actors/sequential_driver.h"
#include "model/decoder.h"
#include "tests/engine_configs.h"
#include "tests/support.h"

using namespace exspec;

namespace {

std::vector<SeqRequest> requests(const Decoder& m, bool seeded) {
  std::vector<SeqRequest> reqs;
  const auto prompts = test::mixed_prompts(10, 2, 14, m.config().vocab_size, 717);
  for (size_t i = 0; i < prompts.size(); ++i) {
    SeqRequest r;
    r.prompt = prompts[i];
    r.max_tokens = 6 + static_cast<int64_t>(i % 4) * 4;
    if (seeded) r.sampling.temperature = 0.9, r.sampling.seed = 300 + i;
    reqs.push_back(r);
  }
  return reqs;
}

}  // namespace

CATCH_TEST_CASE("plan ahead: the engine's tokens with it on equal those with it off (float64 and float32, greedy and "
                "seeded, pre-empted)",
                "[plan_ahead][oracle]") {
  int64_t kept = 0, redone = 0, preempted = 0;
  for (at::ScalarType dt : {at::kDouble, at::kFloat}) {
    auto target = test::load_as(test::model_dir("llama"), dt);
    auto draft = test::load_as(test::truncated_draft(), dt);
    for (bool seeded : {false, true}) {
      const auto reqs = requests(*target, seeded);
      for (int64_t B : {1, 3, 8}) {
        for (bool budget : {false, true}) {
          CATCH_INFO(c10::toString(dt) << (seeded ? ", seeded" : ", greedy") << ", B " << B
                                       << (budget ? ", short KV budget" : ""));
          std::vector<SeqResult> got[2];
          for (Toggle t : {Toggle::Off, Toggle::On}) {
            EngineConfig c = test::inplace_config(B, B + 2, 3, B == 3 ? 5 : 64);
            c.adaptive_k = B != 1;  // auto K: steps of every width
            c.plan_ahead = t;
            if (budget) {  // rows of 12 positions in blocks of 4: growing sequences borrow, then pre-empt
              c.block_size = 4;
              c.kv_cache_bytes = c.slots * 12 * (target->kv_bytes_per_position() + draft->kv_bytes_per_position());
            }
            SequentialDriver engine(target, draft, c);
            got[t == Toggle::On] = engine.run(reqs);
            const RunStats& st = engine.stats();
            if (t == Toggle::Off) CATCH_CHECK(st.plans_kept + st.plans_redone == 0);
            else kept += st.plans_kept, redone += st.plans_redone, preempted += st.preemptions;
          }
          for (size_t i = 0; i < reqs.size(); ++i) {
            CATCH_CHECK(got[1][i].tokens == got[0][i].tokens);
            CATCH_CHECK(got[1][i].finish == got[0][i].finish);
          }
        }
      }
    }
  }
  // It really planned ahead, kept plans and made others again, and the budget really was short.
  CATCH_CHECK(kept > 0);
  CATCH_CHECK(redone > 0);
  CATCH_CHECK(preempted > 0);
}
