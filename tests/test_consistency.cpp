// Incremental decoding against the full forward (model/tools/consistency.h, `exspec check`), and the
// one-row KV stacking that once left a multi-query model's cache unwritten.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include "model/checkpoint.h"
#include "model/tools/consistency.h"
#include "model/decoder.h"
#include "model/oracle/kv_cache.h"
#include "tests/support.h"

using namespace exspec;

namespace {

// A multi-query GLM (one kv head, partial rotary, q/k/v biases) built in memory from seeded
// weights: the shape family of the reported fault, without a checkpoint on disk.
std::shared_ptr<const Decoder> multi_query_glm() {
  ModelConfig c = ModelConfig::parse(R"({"architectures": ["GlmForCausalLM"], "hidden_size": 48,
      "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 1,
      "head_dim": 12, "vocab_size": 300, "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
      "partial_rotary_factor": 0.5, "attention_bias": true})",
                                     "test");
  at::manual_seed(7);
  WeightMap w;
  for (const auto& [name, shape] : expected_weights(c))
    w[name] = (shape.size() == 1 ? 1.0 + 0.1 * at::randn(shape, at::kDouble) : 0.25 * at::randn(shape, at::kDouble))
                  .to(test::device());
  return std::make_shared<const Decoder>(c, w, LoadOptions{at::kDouble, test::device()});
}

std::vector<std::vector<int64_t>> prompts() { return {{1, 5, 9, 13}, {42}, {7, 7, 7, 7, 7, 7, 7, 7, 200}}; }

}  // namespace

CATCH_TEST_CASE("KV cache: stacking one row with one kv head copies its keys and values", "[kv][mqa]") {
  const at::Device dev = test::device();
  for (int64_t heads : {1, 2}) {
    // A row cut from a larger prefill buffer, as prefill_caches() leaves it: a view whose batch
    // stride is the buffer's.
    at::Tensor buf = at::randn({3, heads, 9, 4}, at::TensorOptions().dtype(at::kDouble).device(dev));
    KVCache row = KVCache::from_tensors({buf.narrow(0, 1, 1).narrow(2, 2, 5)}, {buf.narrow(0, 2, 1).narrow(2, 1, 5)});
    for (int64_t reserve : {0, 3}) {
      KVCache s = KVCache::stack_right_aligned({&row}, reserve);
      CATCH_CAPTURE(heads, reserve);
      CATCH_REQUIRE(s.length() == 5);
      CATCH_CHECK(at::equal(s.keys(0), row.keys(0)));
      CATCH_CHECK(at::equal(s.values(0), row.values(0)));
    }
  }
}

CATCH_TEST_CASE("check: every path of a multi-query GLM equals its full forward", "[check][mqa]") {
  auto m = multi_query_glm();
  ConsistencyOptions o;
  o.max_tokens = 12;
  const auto runs = run_paths(*m, prompts(), o);
  CATCH_REQUIRE(runs.size() == 6);
  for (const PathRun& run : runs) {
    CATCH_CAPTURE(run.name);
    for (const auto& p : run.predicted) CATCH_CHECK(p.size() == 12);
    CATCH_CHECK_FALSE(first_divergence(*m, prompts(), run).has_value());
  }
}

CATCH_TEST_CASE("check: a path that picks another token is named at that token", "[check]") {
  auto m = multi_query_glm();
  ConsistencyOptions o;
  o.max_tokens = 8;
  PathRun run = run_paths(*m, prompts(), o).front();
  const int64_t right = run.predicted[2][5];
  run.predicted[2][5] = (right + 1) % m->config().vocab_size;
  run.fed[2][5] = run.predicted[2][5];  // what a faulty incremental path would have fed on
  const auto d = first_divergence(*m, prompts(), run);
  CATCH_REQUIRE(d.has_value());
  CATCH_CHECK(d->prompt == 2);
  CATCH_CHECK(d->token == 5);
  CATCH_CHECK(d->position == 9 + 5);
  CATCH_CHECK(d->full_id == right);
  CATCH_CHECK(d->path_id == (right + 1) % m->config().vocab_size);
  CATCH_CHECK(d->gap > 0);
  CATCH_CHECK(d->margin >= 0);
}
