// float64 exactness of the decoder: padding, batching and the KV cache change nothing.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>

#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/oracle/padding.h"
#include "model/rope.h"
#include "tests/support.h"

using namespace exspec;

namespace {

at::Tensor ids_of(const std::vector<int64_t>& v) { return at::tensor(v, at::kLong).view({1, (int64_t)v.size()}); }

// Logits of one sequence alone, no padding, full recomputation: [T, V].
at::Tensor alone(const Decoder& m, const std::vector<int64_t>& seq) { return test::alone_logits(m, seq); }

double max_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

CATCH_TEST_CASE("batched left-padded forward equals each sequence alone (float64)", "[decoder]") {
  for (const char* arch : {"llama", "qwen2", "qwen3", "glm", "glm4", "mistral", "phi3", "gemma2", "gemma3", "qwen3moe"}) {
    CATCH_SECTION(arch) {
      auto m = Decoder::load(test::model_dir(arch), {at::kDouble, test::device()});
      // Up to 20 tokens: Mistral's window of 16 counts content positions, not padded columns.
      auto prompts = test::mixed_prompts(6, 1, 20, m->config().vocab_size, 7);
      PaddedBatch pb = left_pad(prompts, 0, at::kCPU);
      KVCache c = new_dense_cache(*m, 6);
      at::Tensor logits = dense_forward(*m, pb.ids, pb.positions, pb.mask, c);
      const int64_t T = pb.ids.size(1);
      double worst = 0;
      for (size_t i = 0; i < prompts.size(); ++i) {
        const int64_t n = static_cast<int64_t>(prompts[i].size());
        worst = std::max(worst, max_diff(logits[(int64_t)i].narrow(0, T - n, n), alone(*m, prompts[i])));
      }
      CATCH_CHECK(worst < 1e-9);
      CATCH_CHECK(std::isfinite(logits.abs().max().item<double>()));  // padding rows stay finite too
    }
  }
}

CATCH_TEST_CASE("KV-cached incremental decoding equals full recomputation (float64)", "[decoder]") {
  for (const char* arch : {"llama", "qwen2", "qwen3", "glm", "glm4", "mistral", "phi3", "gemma2", "gemma3", "qwen3moe"}) {
    CATCH_SECTION(arch) {
      auto m = Decoder::load(test::model_dir(arch), {at::kDouble, test::device()});
      auto prompts = test::mixed_prompts(3, 4, 20, m->config().vocab_size, 11);
      // Same total length per row after appending, padded on the left; fed in chunks 1, 3, 2, 1.
      std::vector<std::vector<int64_t>> heads, tails;
      for (auto& p : prompts) {
        heads.emplace_back(p.begin(), p.end() - 4 + 0);
        tails.emplace_back(p.end() - 4, p.end());
      }
      PaddedBatch pb = left_pad(heads, 0, at::kCPU);
      KVCache c = new_dense_cache(*m, 3, 4);  // small capacity: growth happens on the way
      at::Tensor mask = pb.mask;
      at::Tensor pos = mask.sum(1, true);
      dense_forward(*m, pb.ids, pb.positions, mask, c);
      const int64_t T0 = pb.ids.size(1);
      std::vector<at::Tensor> step_logits;
      int64_t done = 0;
      for (int64_t chunk : {1, 2, 1}) {
        std::vector<int64_t> flat;
        for (auto& t : tails) flat.insert(flat.end(), t.begin() + done, t.begin() + done + chunk);
        at::Tensor ids = at::tensor(flat, at::kLong).view({3, chunk});
        at::Tensor p = pos + at::arange(chunk, at::kLong).view({1, chunk});
        mask = at::cat({mask, at::ones({3, chunk}, at::kLong)}, 1);
        step_logits.push_back(dense_forward(*m, ids, p, mask, c));
        pos = pos + chunk;
        done += chunk;
      }
      CATCH_CHECK(c.length() == T0 + 4);
      at::Tensor inc = at::cat(step_logits, 1);  // [3, 4, V]: logits of the 4 tail positions
      for (int64_t i = 0; i < 3; ++i) {
        at::Tensor full = alone(*m, prompts[i]);
        const int64_t n = full.size(0);
        CATCH_CHECK(max_diff(inc[i], full.narrow(0, n - 4, 4)) < 1e-9);
      }
    }
  }
}

CATCH_TEST_CASE("KV cache truncate and row selection keep the right contents", "[decoder]") {
  auto m = Decoder::load(test::model_dir("llama"), {at::kDouble, test::device()});
  auto prompts = test::mixed_prompts(4, 6, 6, m->config().vocab_size, 3);
  PaddedBatch pb = left_pad(prompts, 0, at::kCPU);
  KVCache c = new_dense_cache(*m, 4);
  dense_forward(*m, pb.ids, pb.positions, pb.mask, c);
  KVCache sel = c.select_rows(at::tensor(std::vector<int64_t>{2, 0}, at::kLong));
  CATCH_CHECK(sel.batch() == 2);
  CATCH_CHECK(at::equal(sel.keys(1)[0], c.keys(1)[2]));
  CATCH_CHECK(at::equal(sel.values(3)[1], c.values(3)[0]));
  c.truncate(4);
  CATCH_CHECK(c.length() == 4);
  CATCH_CHECK(c.keys(0).size(2) == 4);
  CATCH_CHECK_THROWS(c.truncate(5));
}

CATCH_TEST_CASE("llama3 rope scaling follows Meta's formula", "[decoder][rope]") {
  ModelConfig c = preset_config("llama", "tiny");  // head_dim 16, theta 5e5, factor 8, original ctx 128
  Rope scaled(c, at::kCPU);
  auto inv = scaled.inv_freq();
  const auto& rs = c.rope_scaling;
  const double lo_wl = rs.original_max_position_embeddings / rs.low_freq_factor;
  const double hi_wl = rs.original_max_position_embeddings / rs.high_freq_factor;
  int changed = 0;
  for (int64_t i = 0; i < c.head_dim / 2; ++i) {
    const double f = 1.0 / std::pow(c.rope_theta, 2.0 * i / c.head_dim);
    const double wl = 2 * M_PI / f;
    double want;
    if (wl < hi_wl) want = f;
    else if (wl > lo_wl) want = f / rs.factor;
    else {
      const double s = (rs.original_max_position_embeddings / wl - rs.low_freq_factor) /
                       (rs.high_freq_factor - rs.low_freq_factor);
      want = (1 - s) * f / rs.factor + s * f;
    }
    CATCH_CHECK(inv[i].item<double>() == Approx(want).epsilon(1e-12));
    changed += want != f;
  }
  CATCH_CHECK(changed > 0);  // the tiny preset really exercises the scaling
}

CATCH_TEST_CASE("architecture features are what the generated checkpoints exercise", "[decoder]") {
  CATCH_CHECK(preset_config("llama", "tiny").num_kv_heads < preset_config("llama", "tiny").num_heads);  // GQA
  CATCH_CHECK(preset_config("qwen2", "tiny").attention_bias);
  CATCH_CHECK(preset_config("qwen3", "tiny").qk_norm);
  CATCH_CHECK(preset_config("qwen3", "tiny").tie_word_embeddings);
  auto q3 = Decoder::load(test::model_dir("qwen3"), {at::kDouble, test::device()});
  CATCH_CHECK(q3->config().head_dim * q3->config().num_heads != q3->config().hidden_size);
}

CATCH_TEST_CASE("bfloat16 and float16 forwards with padding run and stay finite", "[decoder][dtype]") {
  std::vector<at::ScalarType> dtypes{at::kBFloat16};
  if (!test::device().is_cpu()) dtypes.push_back(at::kHalf);  // libtorch 1.13 has no CPU half matmul
  for (at::ScalarType dt : dtypes) {
    CATCH_INFO("dtype " << dt);
    auto m = Decoder::load(test::model_dir("llama"), {dt, test::device()});
    auto prompts = test::mixed_prompts(4, 1, 9, m->config().vocab_size, 13);
    PaddedBatch pb = left_pad(prompts, 0, at::kCPU);  // padding: the mask's fill value must fit the dtype
    KVCache c = new_dense_cache(*m, 4);
    at::Tensor logits = dense_forward(*m, pb.ids, pb.positions, pb.mask, c);
    CATCH_CHECK(std::isfinite(logits.abs().max().item<double>()));
  }
}
