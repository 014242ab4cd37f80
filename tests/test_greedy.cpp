// The oracle: batched nonspec greedy decoding equals batch-1 decoding token for token (float64).
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include "model/decoder.h"
#include "model/oracle/plain_decode.h"
#include "tests/support.h"

using namespace exspec;

namespace {

std::vector<SeqRequest> requests(const std::vector<std::vector<int64_t>>& prompts, int64_t max_tokens,
                                 std::vector<int64_t> eos) {
  std::vector<SeqRequest> r;
  for (size_t i = 0; i < prompts.size(); ++i)
    r.push_back(SeqRequest{prompts[i], max_tokens - static_cast<int64_t>(i % 3) * 4, eos});  // mixed budgets
  return r;
}

}  // namespace

CATCH_TEST_CASE("greedy ids at batch sizes 1-16 equal batch-1 ids (float64)", "[greedy][oracle]") {
  for (const char* arch : {"llama", "qwen2", "qwen3"}) {
    CATCH_SECTION(arch) {
      auto m = Decoder::load(test::model_dir(arch), {at::kDouble, test::device()});
      auto prompts = test::mixed_prompts(16, 1, 24, m->config().vocab_size, 5);
      auto reqs = requests(prompts, 20, m->config().eos_ids);
      auto want = plain_decode(*m, reqs, 1);
      for (int64_t b : {2, 3, 5, 8, 16}) {
        auto got = plain_decode(*m, reqs, b);
        for (size_t i = 0; i < reqs.size(); ++i) {
          CATCH_INFO("arch " << arch << " batch " << b << " prompt " << i);
          CATCH_CHECK(got[i].tokens == want[i].tokens);
          CATCH_CHECK(got[i].finish == want[i].finish);
        }
      }
    }
  }
}

CATCH_TEST_CASE("sequences stop at EOS mid-batch while others go on", "[greedy][oracle]") {
  auto m = Decoder::load(test::model_dir("llama"), {at::kDouble, test::device()});
  auto prompts = test::mixed_prompts(8, 2, 16, m->config().vocab_size, 9);
  auto plain = plain_decode(*m, requests(prompts, 20, {}), 1);
  // Use a token that some sequence generates early as EOS, so that rows end at different steps.
  const int64_t eos = plain[0].tokens.at(2);
  auto reqs = requests(prompts, 20, {eos});
  auto want = plain_decode(*m, reqs, 1);
  int stopped = 0;
  for (const auto& r : want) stopped += r.finish == FinishReason::Stop;
  CATCH_REQUIRE(stopped >= 1);
  CATCH_REQUIRE(stopped < 8);
  CATCH_CHECK(want[0].tokens.size() <= 3);
  CATCH_CHECK(want[0].tokens.back() == eos);
  auto got = plain_decode(*m, reqs, 8);
  for (size_t i = 0; i < reqs.size(); ++i) {
    CATCH_CHECK(got[i].tokens == want[i].tokens);
    CATCH_CHECK(got[i].finish == want[i].finish);
  }
}

CATCH_TEST_CASE("bad requests are refused with a reason", "[greedy][errors]") {
  auto m = Decoder::load(test::model_dir("llama"), {at::kDouble, test::device()});
  CATCH_CHECK_THROWS_WITH(plain_decode(*m, {SeqRequest{{}, 4, {}}}), Catch::Contains("prompt is empty"));
  CATCH_CHECK_THROWS_WITH(plain_decode(*m, {SeqRequest{{1, 999}, 4, {}}}), Catch::Contains("outside the vocabulary"));
  CATCH_CHECK_THROWS_WITH(plain_decode(*m, {SeqRequest{{1, 2}, 600, {}}}), Catch::Contains("exceeds the model's context"));
  auto zero = plain_decode(*m, {SeqRequest{{1, 2}, 0, {}}});
  CATCH_CHECK(zero[0].tokens.empty());
  CATCH_CHECK(zero[0].finish == FinishReason::Length);
}
