// The paper's speculative decoding core: realignment invariants checked directly, and the
// float64 oracle (each of the paper's modes equals batch-1 non-speculative greedy decoding,
// token for token; in place, the same sweep: tests/test_inplace.cpp).
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include "actors/sequential_driver.h"
#include "model/decoder.h"
#include "model/runtime.h"
#include "model/oracle/plain_decode.h"
#include "model/paper/spec_batch.h"
#include "model/paper/speculative.h"
#include "tests/mode_sweep.h"
#include "tests/support.h"

#include <map>
#include <mutex>

using namespace exspec;

namespace {

using test::load64;

using test::truncated_draft;

using test::alone_kv;

// Checks the invariants of one model's realigned cache against each row's own token list.
void check_cache(const Decoder& m, const CacheState& s, const std::vector<std::vector<int64_t>>& cached_tokens) {
  CATCH_REQUIRE(is_aligned(s));
  const int64_t S = s.mask.size(1);
  int64_t longest = 0;
  for (size_t b = 0; b < cached_tokens.size(); ++b) {
    const int64_t n = static_cast<int64_t>(cached_tokens[b].size());
    longest = std::max(longest, n);
    CATCH_CHECK(s.mask[b].sum().item<int64_t>() == n);               // content = every token but pending
    CATCH_CHECK(s.mask[b].narrow(0, S - n, n).all().item<bool>());   // right-aligned, left padding only
    auto want = alone_kv(m, cached_tokens[b]);
    for (int64_t l = 0; l < s.cache.num_layers(); ++l) {
      at::Tensor got = at::cat({s.cache.keys(l)[b], s.cache.values(l)[b]}, -1).narrow(1, S - n, n).to(at::kCPU);
      // Keys carry rope: equal keys also prove the positions were content positions.
      CATCH_CHECK((got - want[l]).abs().max().item<double>() < 1e-9);
    }
  }
  CATCH_CHECK(S == longest);  // minimal padding: no column is padding in every row
}

}  // namespace

CATCH_TEST_CASE("realign right-aligns content with minimal padding and keeps order", "[realign]") {
  // One layer, one head, head_dim 1: each position's key is its column index, so moves are visible.
  const int64_t B = 3, S = 6;
  at::Tensor k = at::arange(S, at::kDouble).view({1, 1, S, 1}).expand({B, 1, S, 1}).contiguous();
  CacheState s;
  s.cache = KVCache::from_tensors({k}, {k.clone()});
  // row 0: pad pad c c hole c   row 1: c c c c c c   row 2: pad pad pad c hole hole
  s.mask = at::tensor(std::vector<int64_t>{0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0}, at::kLong).view({B, S});
  CATCH_CHECK_FALSE(is_aligned(s));
  realign(s, 2);
  CATCH_CHECK(is_aligned(s));
  CATCH_CHECK(s.mask.size(1) == 6);
  CATCH_CHECK(at::equal(s.mask[0], at::tensor(std::vector<int64_t>{0, 0, 0, 1, 1, 1})));
  CATCH_CHECK(at::equal(s.mask[2], at::tensor(std::vector<int64_t>{0, 0, 0, 0, 0, 1})));
  auto keys = s.cache.keys(0);
  CATCH_CHECK(at::equal(keys[0].flatten().narrow(0, 3, 3), at::tensor(std::vector<double>{2, 3, 5}, at::kDouble)));
  CATCH_CHECK(at::equal(keys[1].flatten(), at::arange(6, at::kDouble)));
  CATCH_CHECK(keys[2].flatten()[5].item<double>() == 3);
  CATCH_CHECK(s.cache.capacity() == 8);

  // Shared padding is stripped: drop row 1 and the longest remaining row has 3 tokens.
  s.cache = s.cache.select_rows(at::tensor(std::vector<int64_t>{0, 2}, at::kLong));
  s.mask = s.mask.index_select(0, at::tensor(std::vector<int64_t>{0, 2}, at::kLong));
  realign(s, 0);
  CATCH_CHECK(s.mask.size(1) == 3);
  CATCH_CHECK(at::equal(s.cache.keys(0)[0].flatten(), at::tensor(std::vector<double>{2, 3, 5}, at::kDouble)));
}

CATCH_TEST_CASE("after ragged verification both caches hold every token but the pending one", "[realign]") {
  auto target = load64(test::model_dir("llama"));
  auto draft = load64(truncated_draft());
  auto prompts = test::mixed_prompts(6, 1, 12, target->config().vocab_size, 17);
  std::vector<SeqTensors> seqs = prefill(*target, draft.get(), prompts);
  std::vector<const SeqTensors*> ptrs;
  for (auto& s : seqs) ptrs.push_back(&s);
  SpecBatch b = assemble(ptrs, 5);
  std::vector<std::vector<int64_t>> tokens = prompts;
  std::vector<int64_t> lag;  // tokens before pending the draft has not seen: the prefix, at first
  for (const auto& p : prompts) lag.push_back(static_cast<int64_t>(p.size()) - 1);
  bool saw_ragged = false, saw_full = false, saw_deep_lag = false;
  // K = 0 steps (plain target steps, as adaptive K chooses) let the draft fall behind by several
  // tokens; the next drafting step must catch up in its first forward.
  const int64_t ks[] = {1, 2, 3, 1, 2, 3, 0, 0, 2, 1, 0, 0, 0, 3};
  for (int step = 0; step < 14; ++step) {
    const int64_t K = ks[step];
    at::Tensor drafts = draft_tokens(*draft, b, K);
    VerifyResult v = verify(*target, b, drafts);
    commit(b, v, drafts);
    saw_ragged |= v.accepted.min().item<int64_t>() != v.accepted.max().item<int64_t>();
    saw_full |= K > 0 && v.accepted.eq(K).any().item<bool>();
    for (size_t i = 0; i < tokens.size(); ++i) {
      for (int64_t j = 0; j <= v.accepted[i].item<int64_t>(); ++j) tokens[i].push_back(v.tokens[i][j].item<int64_t>());
      // All K drafts accepted: d_K was never fed to the draft. K = 0: nothing was.
      lag[i] = K == 0 ? lag[i] + 1 : (v.accepted[i].item<int64_t>() == K ? 1 : 0);
      saw_deep_lag |= lag[i] > 1;
    }
    realign(b.target, 5);
    realign(b.draft, 5);
    if (step == 5) {  // a round trip through per-sequence states (what the SequencePool holds)
      std::vector<SeqTensors> rows = split_rows(b);
      std::vector<const SeqTensors*> back;
      for (auto& r : rows) back.push_back(&r);
      b = assemble(back, 5);  // reuse false: a real repad, the rows' caches cut from their batch
    }
    std::vector<std::vector<int64_t>> tcached, dcached;
    const int64_t L = b.lag_tokens.size(1);
    for (size_t i = 0; i < tokens.size(); ++i) {
      CATCH_CHECK(b.lengths[i].item<int64_t>() == static_cast<int64_t>(tokens[i].size()));
      CATCH_CHECK(b.pending[i].item<int64_t>() == tokens[i].back());
      tcached.emplace_back(tokens[i].begin(), tokens[i].end() - 1);
      const int64_t n = b.lag_tokens[i].ge(0).sum().item<int64_t>();
      CATCH_CHECK(n == lag[i]);
      for (int64_t j = 0; j < n && j <= L; ++j)  // right-aligned, in order
        CATCH_CHECK(b.lag_tokens[i][L - 1 - j].item<int64_t>() == tokens[i][tokens[i].size() - 2 - j]);
      dcached.emplace_back(tokens[i].begin(), tokens[i].end() - 1 - lag[i]);
    }
    check_cache(*target, b.target, tcached);
    check_cache(*draft, b.draft, dcached);
  }
  CATCH_CHECK(saw_ragged);    // the test really exercised unpad-append-repad
  CATCH_CHECK(saw_full);      // and the lagging draft cache
  CATCH_CHECK(saw_deep_lag);  // and catching up more than one token
}

CATCH_TEST_CASE("the bonus token is the target's, not the draft's", "[verify]") {
  auto target = load64(test::model_dir("llama"));
  auto unrelated = load64(test::model_dir("llama", "tiny", 77));
  auto prompts = test::mixed_prompts(4, 3, 9, target->config().vocab_size, 2);
  std::vector<SeqTensors> seqs = prefill(*target, unrelated.get(), prompts);
  std::vector<const SeqTensors*> ptrs;
  for (auto& s : seqs) ptrs.push_back(&s);
  SpecBatch b = assemble(ptrs, 4);
  at::Tensor drafts = draft_tokens(*unrelated, b, 2);
  VerifyResult v = verify(*target, b, drafts);
  auto want = plain_decode(*target, [&] {
    std::vector<SeqRequest> r;
    for (auto& p : prompts) r.push_back(SeqRequest{p, 1, {}});
    return r;
  }());
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (v.accepted[i].item<int64_t>() == 0) CATCH_CHECK(v.bonus[i].item<int64_t>() == want[i].tokens[0]);
  }
}

// The paper's modes; in place is swept the same way in tests/test_inplace.cpp.
const std::vector<Mode> kPaperModes{Mode::NonSpec, Mode::EqSpec, Mode::ExSpec};

CATCH_TEST_CASE("the paper's modes equal batch-1 nonspec greedy in float64 (the oracle)", "[oracle]") {
  auto target = load64(test::model_dir("llama"));
  test::mode_sweep(target, {{"identical", target, 1.0, 1.0},
                             {"layer-truncated", load64(truncated_draft()), 0.2, 0.97},
                             {"unrelated", load64(test::model_dir("llama", "tiny", 77)), 0.0, 0.2}},
                   kPaperModes);
}

// GLM-4-0414 (partial interleaved rope, fused MLP, sandwich norms, q/k/v biases, several EOS ids):
// the paper's third pair, through the same sweep.
CATCH_TEST_CASE("the paper's modes equal batch-1 nonspec greedy on a GLM-4 pair (the oracle)", "[oracle][glm]") {
  auto target = load64(test::model_dir("glm4"));
  test::mode_sweep(target, {{"identical", target, 1.0, 1.0},
                             {"layer-truncated", load64(truncated_draft("glm4")), 0.2, 0.97},
                             {"unrelated", load64(test::model_dir("glm4", "tiny", 77)), 0.0, 0.2}},
                   kPaperModes);
}

// int8 and bfloat16 (issue 47): a row's logits do not depend on its batch, so the same sweep
// holds with each dtype's own batch-1 nonspec decoding as the oracle.
CATCH_TEST_CASE("every mode equals batch-1 nonspec greedy in float32, int8 and bfloat16 (each its own oracle)", "[oracle][int8]") {
  for (at::ScalarType dt : test::invariant_dtypes()) {
    CATCH_INFO(dtype_name(dt));
    auto target = test::load_as(test::model_dir("llama"), dt);
    test::mode_sweep(target, {{"layer-truncated", test::load_as(truncated_draft(), dt), 0.2, 0.97}}, kPaperModes);
  }
}

CATCH_TEST_CASE("exspec forms same-length groups when lengths line up", "[oracle][grouping]") {
  auto target = load64(test::model_dir("llama"));
  auto prompts = test::mixed_prompts(16, 8, 8, target->config().vocab_size, 29);  // all equal
  std::vector<SeqRequest> reqs;
  for (auto& p : prompts) reqs.push_back(SeqRequest{p, 12, {}});
  auto want = plain_decode(*target, reqs, 1);
  EngineConfig c;
  c.mode = Mode::ExSpec;
  c.batch_size = 4;
  c.window = 8;
  c.draft_tokens = 3;
  SequentialDriver engine(target, target, c);  // identical draft: uniform acceptance keeps lengths equal
  auto got = engine.run(reqs);
  for (size_t i = 0; i < reqs.size(); ++i) CATCH_CHECK(got[i].tokens == want[i].tokens);
  CATCH_CHECK(engine.stats().grouping_rate() == 1.0);
  CATCH_CHECK(engine.stats().reused_steps > 0);  // W = 2B: the same rows line up again, no copy
}
