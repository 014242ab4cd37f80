// A draft's head read in 4 bits, its best candidates scored again by the int8 head (issue 62,
// model/screened_head.h): the candidates' logits are the whole head's bits, the rest the
// screen's; the loader's checks. The oracle sweeps with screened drafts are in
// tests/test_inplace.cpp and test_sampling.cpp.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <stdexcept>

#include "model/decoder.h"
#include "model/kernels/kquant_kernel.h"
#include "model/kernels/q4_screen.h"
#include "model/kv_store.h"
#include "model/linear.h"
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

// A K-quant head (a Q4_K_M file's Q6_K) scores its candidates with the K-quant kernel
// (KQuantWeight::columns): the same bits as its whole product.
CATCH_TEST_CASE("a screened K-quant head's candidates are the whole head's bits, its choice the whole head's", "[screen][kquant]") {
  const std::string dir = test::kquant_gguf("q4_k_m", true);
  auto whole = test::load_as(dir, at::kChar);
  CATCH_REQUIRE(whole->kquant_weights());  // its head Q6_K (tests/test_gguf_model.cpp checks the file)
  CATCH_CHECK(at::equal(logits_of(*whole), logits_of(*test::load_screened(dir, whole->config().vocab_size))));
  auto screened = test::load_screened(dir, 4);
  const at::Tensor a = logits_of(*whole), b = logits_of(*screened);
  for (int64_t r = 0; r < a.size(0); ++r) {
    CATCH_INFO("position " << r);
    CATCH_CHECK((a[r] == b[r]).sum().item<int64_t>() >= 4);
    CATCH_CHECK(b[r].argmax().item<int64_t>() == a[r].argmax().item<int64_t>());
    CATCH_CHECK((a[r] - b[r]).abs().max().item<double>() > 0.0);
  }
  CATCH_CHECK(screened->product_bytes() < whole->product_bytes());
}

CATCH_TEST_CASE("auto screens an int8 head whose screen saves a ninth of a token's bytes, and no other", "[screen]") {
  CATCH_CHECK(screen_pays(25, 13, 100));        // a Q8_0 head a quarter of the bytes: 12 saved
  CATCH_CHECK_FALSE(screen_pays(24, 13, 100));  // 11 saved
  CATCH_CHECK(screen_pays(33, 22, 99));         // a Q6_K head a third of them
  CATCH_CHECK_FALSE(screen_pays(50, 50, 100));  // a 4-bit head: nothing saved
  CATCH_CHECK_FALSE(screen_pays(0, 0, 0));
  // On heads: a Q6_K head (GGUF's tagged rows of type 14, as the loader hands them on) and a Q8_0
  // one pay from the same saved bytes, their own less the screen's; a float head never.
  const int64_t vocab = 4096, in = 256;
  at::Tensor tagged = at::zeros({vocab, 1, kq::tagged_width(in)}, at::kByte);
  tagged.select(2, 0).fill_(kq::kQ6_K);
  const Linear q6(tagged, {}, WeightPath::Int8), q8(at::randn({vocab, in}), {}, WeightPath::Int8);
  CATCH_REQUIRE(q6.kquant());
  for (const Linear* head : {&q6, &q8}) {
    const int64_t saved = head->bytes() - q4s::weight_bytes(vocab, in);
    CATCH_CHECK(saved > 0);
    CATCH_CHECK(screen_pays(*head, 9 * saved));
    CATCH_CHECK_FALSE(screen_pays(*head, 9 * saved + 1));
  }
  CATCH_CHECK_FALSE(screen_pays(Linear(at::randn({vocab, in})), 1));
  LoadOptions lo{at::kChar, at::kCPU};
  lo.head_screen = kScreenAuto;
  // The tiny target's head is about a tenth of its bytes; its one-layer draft's, more than a quarter.
  const std::string target = test::model_dir("llama"), draft = test::truncated_draft("llama");
  auto t = Decoder::load(target, lo), d = Decoder::load(draft, lo);
  auto whole = test::load_as(draft, at::kChar);
  CATCH_CHECK(t->head_screen() == 0);
  CATCH_CHECK(d->head_screen() == kAutoScreenCandidates);
  CATCH_CHECK(d->product_bytes() < whole->product_bytes());
  // A K-quant draft's Q6_K head is weighed as any int8 head: by what its screen saves (a screen of
  // all its candidates reads the screen in place of the head). The fixture's head, 258 tokens, is
  // too small a part to pay; the 150M pair's is most of its draft (docs/speculation.md).
  const std::string kdir = test::kquant_gguf("q4_k_m", true);
  auto kd = Decoder::load(kdir, lo);
  const int64_t kwhole = test::load_as(kdir, at::kChar)->product_bytes();
  const int64_t saved = kwhole - test::load_screened(kdir, 4)->product_bytes();
  CATCH_CHECK(saved > 0);
  CATCH_CHECK(kd->head_screen() == (9 * saved >= kwhole ? kAutoScreenCandidates : 0));
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
