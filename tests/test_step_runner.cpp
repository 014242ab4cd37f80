// The step runner (issue 60, model/step_runner.h): forwards padded to row buckets, with static
// buffers, in the eager form that CI runs (and on EXSPEC_TEST_DEVICE=cuda, the CUDA graphs).
// A bucketed forward gives the plain forward's logits and stores exactly what it stores (bit for
// bit in float32, within 1e-12 in float64), with the padding rows in nowhere; every part may run twice (a graph's warm-up and capture); the
// engine's tokens with buckets on equal those with buckets off in float64 and float32, greedy
// and seeded. The oracle sweeps run half their cases bucketed (tests/mode_sweep.h).
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "actors/jobs/model_pair.h"
#include "actors/scheduler/engine_config.h"
#include "actors/sequential_driver.h"
#include "model/decoder.h"
#include "model/kv_store.h"
#include "model/step_runner.h"
#include "tests/engine_configs.h"
#include "tests/support.h"

using namespace exspec;

namespace {

// Runs every part twice and returns the second run's outputs, as a CUDA graph's first use does
// (warm-up, then capture): a part that wrote its own input would give other results.
class TwiceParts : public PartRunner {
 public:
  explicit TwiceParts(std::set<std::pair<int64_t, int64_t>>& seen) : seen_(seen) {}
  std::vector<at::Tensor> run(int64_t bucket, int64_t part, const Body& body) override {
    seen_.insert({bucket, part});
    body();
    return body();
  }
  std::string name() const override { return "twice"; }

 private:
  std::set<std::pair<int64_t, int64_t>>& seen_;
};

// Bit for bit where a row's products cannot see the other rows (float32 here: the CPU's packed
// kernels); float64 goes through libtorch's at::linear, whose BLAS takes other paths for other
// row counts (measured: 3 rows padded to 4 differ in the last bits), so there within 1e-12.
bool same(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != at::kDouble) return at::equal(a.cpu(), b.cpu());
  return a.sizes() == b.sizes() && at::allclose(a.cpu(), b.cpu(), 1e-12, 1e-12);
}

struct Case {
  std::vector<std::vector<int64_t>> runs;  // each row's new tokens
  std::vector<int64_t> slots;
  Decoder::Logits logits;
};

// The same forwards on a plain store and on a bucketed one: equal logits, and equal stores (every
// position of every slot, so a padding row written anywhere shows).
void same_forwards(const Decoder& m, std::unique_ptr<PartRunner> runner, const std::vector<Case>& cases) {
  KVStore plain = m.new_store(6, 40, 4), bucketed = m.new_store(6, 40, 4);
  auto state = std::make_shared<StepState>(RowBuckets::standard(), std::move(runner));
  bucketed.set_step(state);
  std::vector<int64_t> held(6, 0);
  for (const Case& c : cases) {
    int64_t T = 0;
    for (const auto& r : c.runs) T = std::max<int64_t>(T, static_cast<int64_t>(r.size()));
    const int64_t B = static_cast<int64_t>(c.runs.size());
    at::Tensor ids = at::zeros({B, T}, at::kLong);
    std::vector<SlotSpan> spans;
    for (int64_t b = 0; b < B; ++b) {
      for (size_t t = 0; t < c.runs[b].size(); ++t) ids[b][static_cast<int64_t>(t)] = c.runs[b][t];
      spans.push_back({c.slots[b], held[c.slots[b]], static_cast<int64_t>(c.runs[b].size()), {}});
    }
    at::Tensor want = m.forward_slots(ids, spans, plain, c.logits), got = m.forward_slots(ids, spans, bucketed, c.logits);
    CATCH_INFO("B " << B << ", T " << T);
    CATCH_CHECK(want.defined() == got.defined());
    if (want.defined()) CATCH_CHECK(same(want, got));
    for (const SlotSpan& s : spans) held[s.slot] += s.count;
    bool same_store = true;
    for (int64_t l = 0; l < plain.num_layers(); ++l)
      for (int64_t s = 0; s < plain.slots(); ++s)
        same_store = same_store && same(plain.keys(l, s, plain.capacity()), bucketed.keys(l, s, bucketed.capacity())) &&
                     same(plain.values(l, s, plain.capacity()), bucketed.values(l, s, bucketed.capacity()));
    CATCH_CHECK(same_store);
  }
  // Every forward here fits a bucket, and most were padded.
  CATCH_CHECK(state->bucketed == static_cast<int64_t>(cases.size()));
  CATCH_CHECK(state->unbucketed == 0);
  CATCH_CHECK(state->padding_rows > 0);
}

std::vector<Case> forwards() {
  using L = Decoder::Logits;
  return {
      {{{5, 9, 11, 2, 7}, {3, 4, 8}}, {0, 3}, L::All},           // prefill chunks, ragged (5 rows + 3: bucket 8)
      {{{6}, {1}}, {0, 3}, L::Last},                               // a draft step, scattered slots
      {{{4, 4, 4, 4}, {2, 2, 2, 2}, {7, 7, 7, 7}}, {0, 3, 5}, L::All},  // a verification, K = 3 (12 rows: 16)
      {{{9, 1}, {3}}, {1, 2}, L::None},                            // newcomers, no logits
      {{{8}, {8}, {8}, {8}, {8}}, {0, 1, 2, 3, 5}, L::Last},      // decode, 5 rows: 8
  };
}

std::vector<SeqRequest> requests(const Decoder& m, bool seeded) {
  std::vector<SeqRequest> reqs;
  const auto prompts = test::mixed_prompts(10, 2, 14, m.config().vocab_size, 606);
  for (size_t i = 0; i < prompts.size(); ++i) {
    SeqRequest r;
    r.prompt = prompts[i];
    r.max_tokens = 8 + static_cast<int64_t>(i % 5) * 3;
    if (seeded) r.sampling.temperature = 0.9, r.sampling.seed = 500 + i;
    reqs.push_back(r);
  }
  return reqs;
}

}  // namespace

CATCH_TEST_CASE("row buckets: a bucketed forward equals the plain one and stores only its content", "[step_runner][isa]") {
  for (at::ScalarType dt : {at::kDouble, at::kFloat}) {
    CATCH_INFO(c10::toString(dt));
    auto m = test::load_as(test::model_dir("llama"), dt);
    same_forwards(*m, eager_parts(), forwards());
    std::set<std::pair<int64_t, int64_t>> seen;
    same_forwards(*m, std::make_unique<TwiceParts>(seen), forwards());
    // Parts 0 .. L + 1 of buckets 8, 2, 16, 4 (4: no head) and 8 again.
    const int64_t L = m->config().num_layers;
    CATCH_CHECK(seen.count({16, L + 1}) == 1);
    CATCH_CHECK(seen.count({4, L}) == 1);
    CATCH_CHECK(seen.count({4, L + 1}) == 0);
    CATCH_CHECK(seen.size() == static_cast<size_t>(3 * (L + 2) + (L + 1)));
  }
}

CATCH_TEST_CASE("row buckets: the engine's tokens with buckets equal those without (float64 and float32, greedy and seeded)",
                "[step_runner][oracle]") {
  for (at::ScalarType dt : {at::kDouble, at::kFloat}) {
    auto target = test::load_as(test::model_dir("llama"), dt);
    auto draft = test::load_as(test::truncated_draft(), dt);
    for (bool seeded : {false, true}) {
      const auto reqs = requests(*target, seeded);
      for (int64_t B : {1, 3, 8}) {
        CATCH_INFO(c10::toString(dt) << (seeded ? ", seeded" : ", greedy") << ", B " << B);
        std::vector<SeqResult> got[2];
        for (Toggle t : {Toggle::Off, Toggle::On}) {
          EngineConfig c = test::inplace_config(B, B + 2, 3, B == 3 ? 5 : 64);
          c.adaptive_k = B != 1;  // auto K: steps of every width
          c.row_buckets = t;
          got[t == Toggle::On] = SequentialDriver(target, draft, c).run(reqs);
        }
        for (size_t i = 0; i < reqs.size(); ++i) {
          CATCH_CHECK(got[1][i].tokens == got[0][i].tokens);
          CATCH_CHECK(got[1][i].finish == got[0][i].finish);
        }
      }
    }
  }
}

CATCH_TEST_CASE("row buckets: the engine's stores take them from the settings, and warm-up leaves the answers as they were",
                "[step_runner]") {
  auto target = test::load_as(test::model_dir("llama"), at::kFloat);
  EngineConfig c = test::inplace_config(4, 6, 3, 64);
  c.slot_positions = 48;
  c.row_buckets = Toggle::Off;
  CATCH_CHECK(make_store(c, target.get())->step() == nullptr);
  c.row_buckets = Toggle::Auto;  // off on the CPU
  CATCH_CHECK((make_store(c, target.get())->step() == nullptr) == !target->device().is_cuda());
  c.row_buckets = Toggle::On;
  auto store = make_store(c, target.get());
  CATCH_REQUIRE(store->step() != nullptr);
  CATCH_CHECK(store->step()->buckets().largest() == 64);
  if (!cuda_graphs_built() || !target->device().is_cuda()) {
    c.cuda_graphs = Toggle::On;  // asked for where it cannot be: an error, not a silent eager run
    CATCH_CHECK_THROWS_AS(make_store(c, target.get()), std::invalid_argument);
  }
  c.cuda_graphs = Toggle::On, c.row_buckets = Toggle::Off;
  CATCH_CHECK_THROWS_AS(validate(c), std::invalid_argument);
  // A warmed store answers as a fresh one: what warm-up wrote is never read as content.
  KVStore fresh = target->new_store(6, 48);
  KVStore warmed = target->new_store(6, 48);
  warmed.set_step(std::make_shared<StepState>(RowBuckets::standard(), eager_parts()));
  warm_up_buckets(*target, warmed);
  CATCH_CHECK(warmed.step()->bucketed == 9);
  const at::Tensor ids = at::tensor(std::vector<int64_t>{3, 1, 4, 1, 5, 9}, at::kLong).view({2, 3});
  const std::vector<SlotSpan> spans{{0, 0, 3, {}}, {4, 0, 3, {}}};
  CATCH_CHECK(at::equal(target->forward_slots(ids, spans, fresh, Decoder::Logits::All).cpu(),
                        target->forward_slots(ids, spans, warmed, Decoder::Logits::All).cpu()));
}
