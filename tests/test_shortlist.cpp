// A draft's head over a shortlist of the vocabulary (issue 62): the kept rows' logits are the
// whole head's, the rest -inf, in every weight path; the shortlist file's ranking and checks.
// The oracle sweeps with shortlisted drafts are in tests/test_inplace.cpp and test_sampling.cpp.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>
#include <fstream>

#include "model/decoder.h"
#include "model/kv_store.h"
#include "model/oracle/plain_decode.h"
#include "model/runtime.h"
#include "model/shortlist_file.h"
#include "model/shortlist_head.h"
#include "tests/support.h"

using namespace exspec;

namespace {

// Every third token, and the last: a shortlist with gaps at both ends.
std::vector<int64_t> every_third(int64_t vocab) {
  std::vector<int64_t> ids;
  for (int64_t t = 1; t < vocab; t += 3) ids.push_back(t);
  if (ids.back() != vocab - 1) ids.push_back(vocab - 1);
  return ids;
}

// The logits of every position of two prompts, one forward in place.
at::Tensor logits_of(const Decoder& m) {
  KVStore store = m.new_store(2, 32);
  at::Tensor ids = at::tensor({5, 9, 77, 3, 120, 6, 6, 200, 41, 7}, at::kLong).view({2, 5});
  std::vector<SlotSpan> rows{{0, 0, 5}, {1, 0, 5}};
  return m.forward_slots(ids.to(m.device()), rows, store, Decoder::Logits::All).to(at::kCPU).to(at::kDouble);
}

void check_head(const std::string& dir, at::ScalarType dtype, at::Device device, bool exact) {
  auto whole = Decoder::load(dir, {dtype, device});
  const std::vector<int64_t> ids = every_third(whole->config().vocab_size);
  LoadOptions lo{dtype, device};
  lo.head_shortlist = ids;
  auto part = Decoder::load(dir, lo);
  CATCH_CHECK(part->head_shortlist_size() == static_cast<int64_t>(ids.size()));
  const at::Tensor a = logits_of(*whole), b = logits_of(*part);
  CATCH_REQUIRE(a.sizes() == b.sizes());
  at::Tensor keep = at::zeros({a.size(-1)}, at::kBool);
  keep.index_fill_(0, at::tensor(ids, at::kLong), true);
  const at::Tensor kept_a = a.index_select(-1, at::tensor(ids, at::kLong)), kept_b = b.index_select(-1, at::tensor(ids, at::kLong));
  if (exact) CATCH_CHECK(at::equal(kept_a, kept_b));
  else CATCH_CHECK((kept_a - kept_b).abs().max().item<double>() < 1e-10);
  const at::Tensor rest = b.index_select(-1, at::nonzero(keep.logical_not()).view(-1));
  CATCH_CHECK(rest.numel() > 0);
  CATCH_CHECK(at::all(at::isinf(rest) & (rest < 0)).item<bool>());
  // Where the head is untied, the draft holds only the kept rows.
  if (!whole->config().tie_word_embeddings) CATCH_CHECK(part->weight_bytes() < whole->weight_bytes());
  // A token's products read only the kept rows of the head, tied or not (decoder_bench's floor).
  CATCH_CHECK(part->product_bytes() < whole->product_bytes());
  CATCH_CHECK(part->num_parameters() == whole->num_parameters());  // what the file holds
}

}  // namespace

CATCH_TEST_CASE("a shortlisted head's logits are the whole head's at its tokens and -inf elsewhere", "[shortlist][isa]") {
  for (const char* arch : {"llama", "qwen3"}) {  // qwen3's tiny preset ties the head to the embedding
    CATCH_INFO(arch);
    check_head(test::model_dir(arch), at::kDouble, test::device(), false);
    if (!test::device().is_cpu()) continue;
    for (at::ScalarType dt : test::invariant_dtypes()) {  // float32, int8, bfloat16
      CATCH_INFO(dtype_name(dt));
      check_head(test::model_dir(arch), dt, at::kCPU, true);
    }
  }
  if (test::device().is_cpu()) {
    CATCH_INFO("Q4_K_M GGUF: the head's Q6_K rows on the K-quant kernel");
    check_head(test::kquant_gguf("q4_k_m"), at::kChar, at::kCPU, true);
  }
}

CATCH_TEST_CASE("a shortlist out of range, repeated or out of order is refused, naming the token", "[shortlist]") {
  CATCH_CHECK_THROWS_WITH(check_shortlist({}, 10), Catch::Contains("holds no token"));
  CATCH_CHECK_THROWS_WITH(check_shortlist({1, 10}, 10), Catch::Contains("token 10, outside the draft's vocabulary of 10"));
  CATCH_CHECK_THROWS_WITH(check_shortlist({-1}, 10), Catch::Contains("token -1"));
  CATCH_CHECK_THROWS_WITH(check_shortlist({1, 3, 3}, 10), Catch::Contains("at token 3"));
  CATCH_CHECK_THROWS_WITH(check_shortlist({4, 2}, 10), Catch::Contains("at token 2"));
  CATCH_CHECK_NOTHROW(check_shortlist({0, 9}, 10));
  LoadOptions lo{at::kDouble, test::device()};
  lo.head_shortlist = {1, 300};  // the tiny vocabulary has 258 tokens
  CATCH_CHECK_THROWS_WITH(Decoder::load(test::model_dir("llama"), lo), Catch::Contains("token 300"));
}

CATCH_TEST_CASE("ranked tokens: most emitted first, end-of-sequence tokens leading, through a file", "[shortlist]") {
  const std::vector<std::vector<int64_t>> outputs{{5, 5, 7, 2}, {7, 5, 9}, {}};
  RankedTokens r = rank_tokens(outputs, {9, 1}, 12);
  CATCH_CHECK(r.tokens == std::vector<int64_t>{9, 1, 5, 7, 2});  // 5 x3, 7 x2, then 2 (ties: by id)
  CATCH_CHECK(r.counts == std::vector<int64_t>{1, 0, 3, 2, 1});
  CATCH_CHECK_THROWS_WITH(rank_tokens({{12}}, {}, 12), Catch::Contains("token 12 is outside a vocabulary of 12"));
  const std::string path = test::scratch_dir() + "/ranked.json";
  r.source = "test";
  write_ranked_tokens(path, r);
  const RankedTokens back = read_ranked_tokens(path);
  CATCH_CHECK(back.tokens == r.tokens);
  CATCH_CHECK(back.counts == r.counts);
  CATCH_CHECK(back.vocab_size == 12);
  CATCH_CHECK(back.source == "test");
  CATCH_CHECK(read_shortlist(path, 3, 12) == std::vector<int64_t>{1, 5, 9});  // the first 3, ascending
  CATCH_CHECK(read_shortlist(path, 0, 12) == std::vector<int64_t>{1, 2, 5, 7, 9});
  CATCH_CHECK(read_shortlist(path, 99, 12).size() == 5);
  CATCH_CHECK_THROWS_WITH(read_shortlist(path, 3, 13), Catch::Contains("vocabulary of 12 tokens, the draft has 13"));
  std::ofstream(path) << "{\"tokens\": [1]}";
  CATCH_CHECK_THROWS_WITH(read_ranked_tokens(path), Catch::Contains("not an exspec-shortlist file"));
  CATCH_CHECK(shortlist_coverage(outputs, {5, 7}) == Approx(5.0 / 7.0));
}
