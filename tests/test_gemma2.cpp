// Issue 71: Gemma 2, Gemma 3's layers without q/k norms or a local rope, each 2nd layer full, and
// soft-capping of the scores (model/kernels/attention_kernel.h) and of the final logits.
#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include "model/fused_ops.h"
#include "model/model_config.h"
#include "tests/support.h"

using namespace exspec;
using test::config_error;

namespace {

const std::string kGemma2 = R"({"architectures": ["Gemma2ForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
  "num_hidden_layers": 5, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
  "max_position_embeddings": 256, "rms_norm_eps": 1e-6)";

ModelConfig parse(const std::string& extra) { return ModelConfig::parse(kGemma2 + extra + "}", "config.json"); }

}  // namespace

CATCH_TEST_CASE("Gemma 2's config: Gemma2Config's defaults, its caps, each 2nd layer full", "[config][gemma2]") {
  const ModelConfig c = parse("");
  CATCH_CHECK(c.arch == Arch::Gemma2);
  CATCH_CHECK(c.head_dim == 256);
  CATCH_CHECK(c.sliding_window == 4096);
  CATCH_CHECK(c.attention_scale() == 1.0 / 16.0);  // query_pre_attn_scalar 256
  CATCH_CHECK(c.attn_logit_softcapping == 50.0);
  CATCH_CHECK(c.final_logit_softcapping == 30.0);
  CATCH_CHECK(c.tie_word_embeddings);
  CATCH_CHECK_FALSE(c.qk_norm);
  CATCH_CHECK(c.sandwich_norms);
  CATCH_CHECK(c.rope_local_theta == 0);  // one rope for every layer
  for (int64_t i = 0; i < 5; ++i) {
    CATCH_INFO(i);
    const LayerKind want{i % 2 ? AttentionWindow::Full : AttentionWindow::Sliding, Activation::GeluTanh, NormForm::Gemma,
                         RopeKind::Global};
    CATCH_CHECK(c.layer_kind(i) == want);
  }
  const ModelConfig off = parse(R"(, "attn_logit_softcapping": null, "final_logit_softcapping": 12.5)");
  CATCH_CHECK(off.attn_logit_softcapping == 0);
  CATCH_CHECK(off.final_logit_softcapping == 12.5);
  const ModelConfig back = ModelConfig::parse(off.to_json_text(), "written");
  CATCH_CHECK(back.attn_logit_softcapping == 0);
  CATCH_CHECK(back.final_logit_softcapping == 12.5);
  CATCH_CHECK_THAT(config_error(kGemma2 + R"(, "attn_logit_softcapping": -1.0})"), Catch::Contains("positive or null"));
  const std::string llama = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
  "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 256, "rms_norm_eps": 1e-6,
  "final_logit_softcapping": 30.0})";
  CATCH_CHECK_THAT(config_error(llama), Catch::Contains("final_logit_softcapping is not served for LlamaForCausalLM"));
}

CATCH_TEST_CASE("final soft-capping: cap * tanh(x / cap) element by element, -inf kept, bits independent of the batch",
                "[gemma2]") {
  const at::Tensor x = at::randn({5, 37}, at::TensorOptions().dtype(at::kFloat)).mul_(4.0f);
  const at::Tensor y = softcap_logits(x, 2.0);
  const float* px = x.data_ptr<float>();
  const float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) CATCH_CHECK(py[i] == std::tanh(px[i] / 2.0f) * 2.0f);
  for (int64_t r = 0; r < 5; ++r) CATCH_CHECK(at::equal(softcap_logits(x.narrow(0, r, 1), 2.0), y.narrow(0, r, 1)));
  at::Tensor s = x.clone();
  s[1][3] = -INFINITY;
  CATCH_CHECK(std::isinf(softcap_logits(s, 2.0)[1][3].item<float>()));
  CATCH_CHECK(y.abs().max().item<float>() <= 2.0f);
  // bfloat16: each of the three steps rounded to it, as Hugging Face's bfloat16 ops do
  const at::Tensor b = x.to(at::kBFloat16), yb = softcap_logits(b, 2.0);
  const at::Tensor want = (b / 2.0).to(at::kFloat).tanh().to(at::kBFloat16).to(at::kFloat).mul(2.0).to(at::kBFloat16);
  CATCH_CHECK(at::allclose(yb.to(at::kFloat), want.to(at::kFloat), 0, 1e-2));
  // float64: the oracle's own
  const at::Tensor d = x.to(at::kDouble);
  CATCH_CHECK(at::allclose(softcap_logits(d, 2.0), d.div(2.0).tanh().mul(2.0), 0, 1e-15));
}
