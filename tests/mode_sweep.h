// The oracle sweep of a mode (the float64 oracle over batch sizes, K and drafts, through the
// sequential driver), shared by the serving engine's tests (tests/test_inplace.cpp) and the
// paper's (tests/paper/test_speculative.cpp).
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "actors/scheduler/engine_config.h"
#include "actors/sequential_driver.h"
#include "model/decoder.h"
#include "tests/random_draft_length.h"
#include "tests/support.h"

namespace exspec::test {

struct DraftCase {
  const char* name;
  std::shared_ptr<const Decoder> model;
  double min_acc, max_acc;  // the acceptance rate this draft has at a fixed K
};

// Each mode, batch size and K (fixed, auto, random per step) with each draft yields exactly the
// tokens of batch-1 nonspec greedy decoding of `target`, finish reasons included; at a fixed K
// each draft's acceptance rate is in its range. In place, every other case runs with row buckets
// (model/step_runner.h: each forward padded to a fixed row count; on a CUDA device, as CUDA
// graphs), the others without: both against the same oracle, at no extra cases.
inline void mode_sweep(const std::shared_ptr<const Decoder>& target, const std::vector<DraftCase>& drafts,
                       const std::vector<Mode>& modes) {
  const auto [reqs, want] = stopping_requests(*target);
  int64_t case_no = 0;

  for (const auto& d : drafts) {
    for (Mode mode : modes) {
      for (int64_t B : {1, 2, 3, 8, 16}) {
        // K: fixed 1, 3, 5; -1 = auto (the calibrated policy); -2 = random K per step, 0 included.
        for (int64_t K : {1, 3, 5, -1, -2}) {
          if (mode == Mode::NonSpec && (K != 1 || d.model != target)) continue;
          EngineConfig c;
          c.mode = mode;
          c.batch_size = B;
          c.draft_tokens = std::max<int64_t>(K, 1);
          c.adaptive_k = K < 0;
          c.window = c.slots = B + (B % 3) * 2;  // W (or the slots) >= B, sometimes == B
          c.prefill_chunk = (B + K) % 2 ? 5 : 64;  // in place: prompts stored in chunks, or whole
          c.row_buckets = mode == Mode::InPlace && case_no++ % 2 ? Toggle::On : Toggle::Off;
          SequentialDriver engine(target, d.model, c);
          if (K == -2) engine.set_policy(std::make_shared<RandomDraftLength>(B * 31 + 7, 5));
          auto got = engine.run(reqs);
          CATCH_INFO("draft " << d.name << ", mode " << mode_name(mode) << ", B " << B << ", K " << K << ", row buckets "
                              << toggle_name(c.row_buckets));
          for (size_t i = 0; i < reqs.size(); ++i) {
            CATCH_CHECK(got[i].tokens == want[i].tokens);
            CATCH_CHECK(got[i].finish == want[i].finish);
          }
          if (K == -2 && mode != Mode::NonSpec) {  // the random policy really mixed K = 0 and K > 0
            CATCH_CHECK(engine.stats().k_steps.size() > 1);
            CATCH_CHECK(engine.stats().k_steps.at(0) > 0);
          }
          if (mode != Mode::NonSpec && K > 0) {  // the ranges describe each draft at a fixed K
            CATCH_CHECK(engine.stats().acceptance_rate() >= d.min_acc);
            CATCH_CHECK(engine.stats().acceptance_rate() <= d.max_acc);
          }
        }
      }
    }
  }
}

}  // namespace exspec::test
