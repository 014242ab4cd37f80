// A draft's head read in 4 bits, its best candidates scored again by the int8 head (issue 62,
// model/screened_head.h): the candidates' logits are the whole head's bits, the rest the
// screen's; the loader's checks. The oracle sweeps with screened drafts are in
// tests/test_inplace.cpp and test_sampling.cpp.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <stdexcept>

#include "model/decoder.h"
#include "model/kv_store.h"
#include "tests/support.h"

using namespace exspec;

namespace {

// The logits of every position of two prompts, one forward in place.
at::Tensor logits_of(const Decoder& m) {
  KVStore store = m.new_store(2, 32);
  at::Tensor ids = at::tensor({5, 9, 77, 3, 120, 6, 6, 200, 41, 7}, at::kLong).view({2, 5});
  std::vector<SlotSpan> rows{{0, 0, 5}, {1, 0, 5}};
  return m.forward_slots(ids, rows, store, Decoder::Logits::All).view({10, -1});
}

}  // namespace

CATCH_TEST_CASE("a screened head that scores every token again is the whole int8 head, bit for bit", "[screen]") {
  const std::string dir = test::model_dir("llama");
  auto whole = test::load_as(dir, at::kChar);
  auto all = test::load_screened(dir, whole->config().vocab_size);
  CATCH_CHECK(all->head_screen() == whole->config().vocab_size);
  CATCH_CHECK(at::equal(logits_of(*whole), logits_of(*all)));
}

CATCH_TEST_CASE("a screened head's candidates are the whole head's bits, its choice the whole head's, the rest near", "[screen]") {
  for (const char* arch : {"llama", "qwen3"}) {  // qwen3's tiny preset ties the head to the embedding
    CATCH_INFO(arch);
    const std::string dir = test::model_dir(arch);
    auto whole = test::load_as(dir, at::kChar);
    auto screened = test::load_screened(dir, 4);
    const at::Tensor a = logits_of(*whole), b = logits_of(*screened);
    CATCH_REQUIRE(a.sizes() == b.sizes());
    for (int64_t r = 0; r < a.size(0); ++r) {
      CATCH_INFO("position " << r);
      const at::Tensor same = (a[r] == b[r]);
      CATCH_CHECK(same.sum().item<int64_t>() >= 4);                         // the candidates at least
      CATCH_CHECK(b[r].argmax().item<int64_t>() == a[r].argmax().item<int64_t>());
      const double spread = (a[r].max() - a[r].min()).item<double>();
      CATCH_CHECK((a[r] - b[r]).abs().max().item<double>() < 0.25 * spread);  // the screen's 4-bit rounding
      CATCH_CHECK((a[r] - b[r]).abs().max().item<double>() > 0.0);            // and not the whole head
    }
    // The screen is held beside the int8 head; a token's products read the screen instead of it.
    CATCH_CHECK(screened->weight_bytes() > whole->weight_bytes());
    CATCH_CHECK(screened->product_bytes() < whole->product_bytes());
  }
}

CATCH_TEST_CASE("auto screens an int8 head that is a quarter of a token's bytes or more, and no other", "[screen]") {
  CATCH_CHECK(screen_pays(true, 25, 100));
  CATCH_CHECK_FALSE(screen_pays(true, 24, 100));
  CATCH_CHECK_FALSE(screen_pays(false, 90, 100));  // a float or K-quant head
  CATCH_CHECK_FALSE(screen_pays(true, 0, 0));
  LoadOptions lo{at::kChar, at::kCPU};
  lo.head_screen = kScreenAuto;
  // The tiny target's head is about a tenth of its bytes; its one-layer draft's, more than a quarter.
  const std::string target = test::model_dir("llama"), draft = test::truncated_draft("llama");
  auto t = Decoder::load(target, lo), d = Decoder::load(draft, lo);
  auto whole = test::load_as(draft, at::kChar);
  CATCH_CHECK(t->head_screen() == 0);
  CATCH_CHECK(d->head_screen() == kAutoScreenCandidates);
  CATCH_CHECK(d->product_bytes() < whole->product_bytes());
  lo.dtype = at::kFloat;  // no int8 head: off, where a count throws
  CATCH_CHECK(Decoder::load(draft, lo)->head_screen() == 0);
  lo.dtype = at::kChar;
  lo.head_shortlist = {1, 2, 3};  // a shortlist instead: off, where a count throws
  CATCH_CHECK(Decoder::load(draft, lo)->head_screen() == 0);
}

CATCH_TEST_CASE("a screened head needs int8 and no shortlist", "[screen]") {
  const std::string dir = test::model_dir("llama");
  LoadOptions lo{at::kFloat, at::kCPU};
  lo.head_screen = 4;
  CATCH_CHECK_THROWS_WITH(Decoder::load(dir, lo), Catch::Contains("int8"));
  lo.dtype = at::kChar;
  lo.head_shortlist = {1, 2, 3};
  CATCH_CHECK_THROWS_WITH(Decoder::load(dir, lo), Catch::Contains("not both"));
}
