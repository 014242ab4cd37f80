#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <string>

#include "model/architectures.h"
#include "model/gguf_config.h"
#include "model/layer_weights.h"
#include "model/model_config.h"
#include "tests/support.h"

using exspec::ModelConfig;
using exspec::test::config_error;
using exspec::test::replace_once;

namespace {

const char* kLlama = R"({
  "architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
  "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
  "vocab_size": 100, "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
  "rope_theta": 500000.0, "eos_token_id": [7, 9], "bos_token_id": 1,
  "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                   "high_freq_factor": 4.0, "original_max_position_embeddings": 64}})";

std::string moe_config(const std::string& extra, const std::string& cls = "Qwen3MoeForCausalLM") {
  return R"({"architectures": [")" + cls + R"("], "hidden_size": 64, "intermediate_size": 128,
  "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
  "vocab_size": 100, "max_position_embeddings": 256, "rms_norm_eps": 1e-6)" + extra + "}";
}

}  // namespace

CATCH_TEST_CASE("config.json of a Llama 3 model parses every field", "[config]") {
  ModelConfig c = ModelConfig::parse(kLlama, "config.json");
  CATCH_CHECK(c.arch == exspec::Arch::Llama);
  CATCH_CHECK(c.hidden_size == 64);
  CATCH_CHECK(c.num_kv_heads == 2);
  CATCH_CHECK(c.head_dim == 16);
  CATCH_CHECK(c.rms_norm_eps == Approx(1e-5));
  CATCH_CHECK(c.rope_scaling.type == "llama3");
  CATCH_CHECK(c.rope_scaling.original_max_position_embeddings == 64);
  CATCH_CHECK(c.eos_ids == std::vector<int64_t>{7, 9});
  CATCH_CHECK(c.bos_id == 1);
  CATCH_CHECK_FALSE(c.tie_word_embeddings);
  CATCH_CHECK_FALSE(c.attention_bias);
}

CATCH_TEST_CASE("Qwen2 implies q/k/v biases, Qwen3 q/k norm and an explicit head_dim", "[config]") {
  auto q2 = ModelConfig::parse(replace_once(kLlama, "LlamaForCausalLM", "Qwen2ForCausalLM"), "c");
  CATCH_CHECK(q2.attention_bias);
  CATCH_CHECK_FALSE(q2.qk_norm);
  auto q3 = ModelConfig::parse(
      replace_once(replace_once(kLlama, "LlamaForCausalLM", "Qwen3ForCausalLM"), "\"vocab_size\"", "\"head_dim\": 32, \"vocab_size\""),
      "c");
  CATCH_CHECK(q3.qk_norm);
  CATCH_CHECK(q3.head_dim == 32);
  auto single_eos = ModelConfig::parse(replace_once(kLlama, "[7, 9]", "2"), "c");
  CATCH_CHECK(single_eos.eos_ids == std::vector<int64_t>{2});
}

CATCH_TEST_CASE("config errors name the problem", "[config]") {
  CATCH_CHECK_THAT(config_error(replace_once(kLlama, "LlamaForCausalLM", "GPTNeoXForCausalLM")),
                   Catch::Contains("unknown architecture \"GPTNeoXForCausalLM\""));
  CATCH_CHECK_THAT(config_error(replace_once(kLlama, "\"hidden_size\": 64,", "")), Catch::Contains("missing field \"hidden_size\""));
  CATCH_CHECK_THAT(config_error(replace_once(kLlama, "\"rms_norm_eps\": 1e-5,", "")), Catch::Contains("rms_norm_eps"));
  CATCH_CHECK_THAT(config_error(replace_once(kLlama, "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3")),
                   Catch::Contains("multiple of num_key_value_heads"));
  CATCH_CHECK_THAT(config_error(replace_once(kLlama, "\"llama3\"", "\"yarn\"")), Catch::Contains("unsupported rope_type \"yarn\""));
  CATCH_CHECK_THAT(config_error("{not json"), Catch::Contains("not valid JSON"));
  CATCH_CHECK_THAT(config_error(replace_once(kLlama, "\"vocab_size\": 100", "\"vocab_size\": \"100\"")),
                   Catch::Contains("\"vocab_size\" must be an integer"));
  CATCH_CHECK_THAT(config_error(replace_once(kLlama, "\"vocab_size\"", "\"hidden_act\": \"gelu\", \"vocab_size\"")),
                   Catch::Contains("hidden_act"));
  // A window switch on a class without a window (Qwen2's, Mistral's and Phi-3's are served).
  CATCH_CHECK_THAT(config_error(replace_once(kLlama, "\"vocab_size\"", "\"use_sliding_window\": true, \"vocab_size\"")),
                   Catch::Contains("use_sliding_window=true is not supported for LlamaForCausalLM"));
}

CATCH_TEST_CASE("to_json_text round-trips", "[config]") {
  ModelConfig c = ModelConfig::parse(kLlama, "config.json");
  ModelConfig d = ModelConfig::parse(c.to_json_text(), "again");
  CATCH_CHECK(d.to_json_text() == c.to_json_text());
  CATCH_CHECK(d.rope_scaling.factor == 8.0);
  CATCH_CHECK(d.eos_ids == c.eos_ids);
}

namespace {

// GLM-4-9B-0414's config.json (Glm4ForCausalLM), as published.
const char* kGlm4 = R"({
  "architectures": ["Glm4ForCausalLM"], "attention_bias": true, "attention_dropout": 0.0,
  "eos_token_id": [151329, 151336, 151338], "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096,
  "initializer_range": 0.02, "intermediate_size": 13696, "max_position_embeddings": 32768, "model_type": "glm4",
  "num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 2, "pad_token_id": 151329,
  "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "vocab_size": 151552})";

}  // namespace

CATCH_TEST_CASE("GLM-4 configs: partial interleaved rope, fused MLP, q/k/v biases only, several EOS", "[config][glm]") {
  ModelConfig g4 = ModelConfig::parse(kGlm4, "config.json");
  CATCH_CHECK(g4.arch == exspec::Arch::Glm4);
  CATCH_CHECK(g4.head_dim == 128);
  CATCH_CHECK(g4.rotary_dim() == 64);
  CATCH_CHECK(g4.rope_interleaved);
  CATCH_CHECK(g4.fused_gate_up);
  CATCH_CHECK(g4.sandwich_norms);
  CATCH_CHECK(g4.attention_bias);
  CATCH_CHECK_FALSE(g4.o_proj_bias());
  CATCH_CHECK(g4.eos_ids == std::vector<int64_t>{151329, 151336, 151338});

  // GLM-4-9B-chat-hf (GlmForCausalLM): no sandwich norms. GlmConfig's defaults fill what is left out:
  // attention_bias on, partial_rotary_factor 0.5, head_dim 128 (not hidden / heads).
  std::string glm = replace_once(replace_once(kGlm4, "Glm4ForCausalLM", "GlmForCausalLM"), "\"head_dim\": 128, ", "");
  glm = replace_once(replace_once(glm, "\"attention_bias\": true, ", ""), "\"partial_rotary_factor\": 0.5, ", "");
  glm = replace_once(glm, "\"hidden_size\": 4096", "\"hidden_size\": 2048");
  ModelConfig g = ModelConfig::parse(glm, "config.json");
  CATCH_CHECK(g.arch == exspec::Arch::Glm);
  CATCH_CHECK(g.head_dim == 128);
  CATCH_CHECK(g.rotary_dim() == 64);
  CATCH_CHECK(g.attention_bias);
  CATCH_CHECK_FALSE(g.sandwich_norms);
  CATCH_CHECK(g.fused_gate_up);

  ModelConfig back = ModelConfig::parse(g4.to_json_text(), "again");
  CATCH_CHECK(back.to_json_text() == g4.to_json_text());
  CATCH_CHECK(back.sandwich_norms);
  CATCH_CHECK(back.partial_rotary_factor == 0.5);

  CATCH_CHECK_THAT(config_error(replace_once(kGlm4, "\"partial_rotary_factor\": 0.5", "\"partial_rotary_factor\": 0.01")),
                   Catch::Contains("partial_rotary_factor"));
  CATCH_CHECK_THAT(config_error(replace_once(kLlama, "\"vocab_size\"", "\"partial_rotary_factor\": 0.5, \"vocab_size\"")),
                   Catch::Contains("partial_rotary_factor is only supported for GLM"));
  // Llama / Qwen3 with attention_bias bias o_proj too; GLM never does.
  CATCH_CHECK(ModelConfig::parse(replace_once(kLlama, "\"vocab_size\"", "\"attention_bias\": true, \"vocab_size\""), "c")
                  .o_proj_bias());
}

// Issue 71: an architecture is one row (model/architectures.h). Every Hugging Face class of a
// row parses to that row's architecture and layers; its names find it; make-model's config.json
// names the row's first class; other classes are refused listing every row's.
CATCH_TEST_CASE("every architecture row's classes and names find it, and its layers come from it", "[config]") {
  using namespace exspec;
  std::set<std::string> names;
  for (const ArchitectureRow& row : architectures()) {
    CATCH_INFO(row.name);
    CATCH_CHECK(names.insert(row.name).second);
    CATCH_CHECK(architecture_by_name(row.name) == &row);
    CATCH_CHECK(&architecture(row.arch) == &row);
    CATCH_CHECK(std::string(arch_name(row.arch)) == row.name);
    if (row.gguf) CATCH_CHECK(architecture_by_gguf(row.gguf, row.gguf_windowed) == &row);
    for (const char* cls : row.hf_classes) {
      CATCH_CHECK(architecture_by_class(cls) == &row);
      // kLlama's fields with this class (head_dim given, so GLM's default of 128 does not apply)
      const ModelConfig c = ModelConfig::parse(replace_once(replace_once(kLlama, "LlamaForCausalLM", cls), "\"hidden_size\"", "\"head_dim\": 16, \"hidden_size\""),
                                               "config.json");
      CATCH_CHECK(c.arch == row.arch);
      CATCH_CHECK(c.qk_norm == row.qk_norm);
      CATCH_CHECK(c.fused_gate_up == row.fused_gate_up);
      CATCH_CHECK(c.sandwich_norms == row.sandwich_norms);
      CATCH_CHECK(c.rope_interleaved == row.rope_interleaved);
      CATCH_CHECK(c.attention_bias == (row.qkv_bias || row.attention_bias_default));
      const bool windowed = row.sliding_window_all || row.sliding_window_pattern_default > 0;
      CATCH_CHECK(c.sliding_window == (windowed ? row.sliding_window_default : 0));
      CATCH_CHECK(ModelConfig::parse(c.to_json_text(), "written").arch == row.arch);
    }
  }
  CATCH_CHECK(architecture_by_gguf("glm4") == nullptr);  // GLM is not served from GGUF
  const std::string err = config_error(replace_once(kLlama, "LlamaForCausalLM", "GemmaForCausalLM"));
  CATCH_CHECK(err.find("unknown architecture \"GemmaForCausalLM\" (supported: " + architecture_classes() + ")") != std::string::npos);
}

// Issue 71: a checkpoint's tensors are named once (model/layer_weights.h). Each row is found by
// its names; GGUF's names are llama.cpp's; which tensors a layer has follows from the row.
CATCH_TEST_CASE("every weight row is found by its names, and a layer's tensors follow from its architecture", "[config]") {
  using namespace exspec;
  std::set<std::string> hf, gguf;
  for (const auto* table : {&model_weights(), &layer_weights()})
    for (const WeightName& w : *table) {
      CATCH_INFO(w.hf);
      CATCH_CHECK(&weight_name(w.id) == &w);
      CATCH_CHECK(hf.insert(w.hf).second);
      // llama.cpp's phi3 names its fused gate and up ffn_up, as the split up: never both in a model
      if (w.gguf && w.id != WeightId::GateUp) CATCH_CHECK(gguf.insert(w.gguf).second);
      for (const ArchitectureRow& row : architectures()) {  // every row's own names find their weight
        const std::string name = hf_weight_name(row.arch, w.id, 3, 5);  // an expert's: expert 5's
        CATCH_CHECK(weight_by_hf(row.arch, name) == &w);
        CATCH_CHECK(gguf::gguf_name(row.arch, name) == gguf_weight_name(w.id, 3));
      }
    }
  CATCH_CHECK(hf_weight_name(Arch::Llama, WeightId::Q, 3) == "model.layers.3.self_attn.q_proj.weight");
  CATCH_CHECK(*gguf_weight_name(WeightId::Q, 3) == "blk.3.attn_q.weight");
  CATCH_CHECK(*gguf_weight_name(WeightId::Head) == "output.weight");
  CATCH_CHECK(weight_by_hf(Arch::Llama, "model.layers.3.mlp.nothing.weight") == nullptr);
  CATCH_CHECK(*gguf::gguf_name(Arch::Phi3, "model.layers.0.mlp.gate_up_proj.weight") == "blk.0.ffn_up.weight");
  // Gemma's post_attention_layernorm follows attention; GLM-4's (Llama's name) precedes the MLP
  CATCH_CHECK(weight_by_hf(Arch::Gemma3, "model.layers.2.post_attention_layernorm.weight")->id == WeightId::PostAttnNorm);
  CATCH_CHECK(weight_by_hf(Arch::Glm4, "model.layers.2.post_attention_layernorm.weight")->id == WeightId::MlpNorm);
  CATCH_CHECK(hf_weight_name(Arch::Gemma3, WeightId::MlpNorm, 2) == "model.layers.2.pre_feedforward_layernorm.weight");
  CATCH_CHECK(*gguf::gguf_name(Arch::Gemma3, "model.layers.2.post_feedforward_layernorm.weight") == "blk.2.post_ffw_norm.weight");

  auto layer = [](const char* cls, const std::string& extra = "") {
    const ModelConfig c = ModelConfig::parse(replace_once(replace_once(kLlama, "LlamaForCausalLM", cls), "\"hidden_size\"",
                                                     "\"head_dim\": 16, " + extra + "\"hidden_size\""), "config.json");
    std::string out;
    for (const WeightName& w : layer_weights())
      if (has_weight(c, w, 0)) out += std::string(out.empty() ? "" : " ") + hf_name(c.arch, w);
    return out;
  };
  const std::string attn = "input_layernorm.weight self_attn.q_proj.weight self_attn.k_proj.weight self_attn.v_proj.weight";
  const std::string bias = " self_attn.q_proj.bias self_attn.k_proj.bias self_attn.v_proj.bias";
  const std::string mlp = " post_attention_layernorm.weight mlp.gate_proj.weight mlp.up_proj.weight mlp.down_proj.weight";
  const std::string o = " self_attn.o_proj.weight";
  CATCH_CHECK(layer("LlamaForCausalLM") == attn + o + mlp);
  CATCH_CHECK(layer("LlamaForCausalLM", "\"attention_bias\": true, ") == attn + bias + o + " self_attn.o_proj.bias" + mlp);
  CATCH_CHECK(layer("Qwen2ForCausalLM") == attn + bias + o + mlp);
  CATCH_CHECK(layer("Qwen3ForCausalLM") == attn + " self_attn.q_norm.weight self_attn.k_norm.weight" + o + mlp);
  const std::string glm_mlp = " post_attention_layernorm.weight mlp.gate_up_proj.weight mlp.down_proj.weight";
  CATCH_CHECK(layer("GlmForCausalLM") == attn + bias + o + glm_mlp);
  CATCH_CHECK(layer("Glm4ForCausalLM") == attn + bias + o + " post_self_attn_layernorm.weight" + glm_mlp + " post_mlp_layernorm.weight");
  CATCH_CHECK(layer("MistralForCausalLM") == attn + o + mlp);
  CATCH_CHECK(layer("Phi3ForCausalLM") == "input_layernorm.weight self_attn.qkv_proj.weight" + o + glm_mlp);
  CATCH_CHECK(layer("Gemma3ForCausalLM") == attn + " self_attn.q_norm.weight self_attn.k_norm.weight" + o +
                                                " post_attention_layernorm.weight pre_feedforward_layernorm.weight" +
                                                " mlp.gate_proj.weight mlp.up_proj.weight mlp.down_proj.weight post_feedforward_layernorm.weight");

  // Qwen3-MoE: Qwen3's attention, then the router and each expert's products in place of the MLP
  CATCH_CHECK(layer("Qwen3MoeForCausalLM") == attn + " self_attn.q_norm.weight self_attn.k_norm.weight" + o +
                                                  " post_attention_layernorm.weight mlp.gate.weight mlp.experts.*.gate_proj.weight" +
                                                  " mlp.experts.*.up_proj.weight mlp.experts.*.down_proj.weight");
  CATCH_CHECK(layer("Qwen3MoeForCausalLM", "\"mlp_only_layers\": [0], ") == attn + " self_attn.q_norm.weight self_attn.k_norm.weight" + o + mlp);
  CATCH_CHECK(hf_weight_name(Arch::Qwen3Moe, WeightId::ExpertUp, 2, 17) == "model.layers.2.mlp.experts.17.up_proj.weight");
  CATCH_CHECK(expert_of("model.layers.2.mlp.experts.17.up_proj.weight") == 17);
  CATCH_CHECK(expert_of("model.layers.2.mlp.up_proj.weight") == -1);
  CATCH_CHECK(weight_by_hf(Arch::Qwen3Moe, "model.layers.2.mlp.experts.x.up_proj.weight") == nullptr);
  CATCH_CHECK(*gguf::gguf_name(Arch::Qwen3Moe, "model.layers.2.mlp.experts.17.down_proj.weight") == "blk.2.ffn_down_exps.weight");
  CATCH_CHECK_THROWS_AS(hf_weight_name(Arch::Qwen3Moe, WeightId::ExpertUp, 2), std::logic_error);

  // llama.cpp's converter permuted llama's q and k (weights and biases), over their heads
  const ModelConfig llama = ModelConfig::parse(kLlama, "config.json");
  CATCH_CHECK(gguf::permuted_heads(llama, hf_weight_name(Arch::Llama, WeightId::Q, 1)) == 4);
  CATCH_CHECK(gguf::permuted_heads(llama, hf_weight_name(Arch::Llama, WeightId::KBias, 1)) == 2);
  CATCH_CHECK(gguf::permuted_heads(llama, hf_weight_name(Arch::Llama, WeightId::V, 1)) == 0);
  CATCH_CHECK(gguf::permuted_heads(ModelConfig::parse(replace_once(kLlama, "LlamaForCausalLM", "Qwen2ForCausalLM"), "config.json"),
                                   hf_weight_name(Arch::Qwen2, WeightId::Q, 1)) == 0);
}

// Issue 71: layers have kinds (model/layer_kind.h). Every class's layers are Llama's kind:
// SiLU, Llama's RMSNorm, and full attention unless the row has a window (Mistral's default
// here); a layer outside the model has none.
CATCH_TEST_CASE("every architecture's layers are of Llama's kind, Mistral's with its window, Qwen3-MoE's with experts", "[config]") {
  using namespace exspec;
  for (const ArchitectureRow& row : architectures())
    for (const char* cls : row.hf_classes) {
      CATCH_INFO(cls);
      if (row.norm != NormForm::Llama) continue;  // Gemma: the test below
      const ModelConfig c = ModelConfig::parse(replace_once(replace_once(kLlama, "LlamaForCausalLM", cls), "\"hidden_size\"", "\"head_dim\": 16, \"hidden_size\""),
                                               "config.json");
      LayerKind llama{row.sliding_window_default > 0 ? AttentionWindow::Sliding : AttentionWindow::Full,
                      Activation::Silu, NormForm::Llama};
      if (row.experts) llama.mlp = Mlp::Experts;  // Qwen3-MoE: experts on every layer by default
      for (int64_t i = 0; i < c.num_layers; ++i) CATCH_CHECK(c.layer_kind(i) == llama);
      CATCH_CHECK_THROWS_AS(c.layer_kind(c.num_layers), std::out_of_range);
      CATCH_CHECK_THROWS_AS(c.layer_kind(-1), std::out_of_range);
    }
}

// Issue 71: Gemma 3's layers as Gemma3TextConfig makes them: five sliding layers (local rope) to
// each full one, GELU-tanh, the (1 + w) norm; and what config.json may change of that.
CATCH_TEST_CASE("Gemma 3's config: its window pattern, local rope, activation, attention scale and tied head", "[config]") {
  using namespace exspec;
  const std::string gemma = replace_once(replace_once(kLlama, "LlamaForCausalLM", "Gemma3ForCausalLM"), "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 7");
  const ModelConfig c = ModelConfig::parse(gemma, "config.json");
  CATCH_CHECK(c.head_dim == 256);  // Gemma3TextConfig's defaults
  CATCH_CHECK(c.sliding_window == 4096);
  CATCH_CHECK(c.rope_local_theta == 10000.0);
  CATCH_CHECK(c.query_pre_attn_scalar == 256.0);
  CATCH_CHECK(c.attention_scale() == 1.0 / 16.0);
  CATCH_CHECK(c.tie_word_embeddings);
  CATCH_CHECK(c.norm_offset == 1.0);
  CATCH_CHECK(c.embedding_scale() == 8.0);
  CATCH_CHECK(c.qk_norm);
  CATCH_CHECK(c.sandwich_norms);
  for (int64_t i = 0; i < 7; ++i) {
    CATCH_INFO(i);
    const bool full = i == 5;
    const LayerKind want{full ? AttentionWindow::Full : AttentionWindow::Sliding, Activation::GeluTanh, NormForm::Gemma,
                         full ? RopeKind::Global : RopeKind::Local};
    CATCH_CHECK(c.layer_kind(i) == want);
  }
  const ModelConfig p = ModelConfig::parse(replace_once(gemma, "\"hidden_size\"", "\"sliding_window_pattern\": 2, \"sliding_window\": 8, "
                                                   "\"query_pre_attn_scalar\": 24, \"rope_local_base_freq\": 500.0, \"hidden_size\""), "c");
  CATCH_CHECK(p.sliding_window == 8);
  CATCH_CHECK(p.layer_kind(0).window == AttentionWindow::Sliding);
  CATCH_CHECK(p.layer_kind(1).window == AttentionWindow::Full);
  CATCH_CHECK(p.rope_local_theta == 500.0);
  CATCH_CHECK(p.attention_scale() == 1.0 / std::sqrt(24.0));
  const std::string types = "\"layer_types\": [\"full_attention\", \"sliding_attention\", \"full_attention\", \"full_attention\", "
                            "\"full_attention\", \"full_attention\", \"sliding_attention\"], \"hidden_size\"";
  const ModelConfig t = ModelConfig::parse(replace_once(gemma, "\"hidden_size\"", types), "c");
  CATCH_CHECK(t.layer_kind(0).rope == RopeKind::Global);
  CATCH_CHECK(t.layer_kind(1).rope == RopeKind::Local);
  CATCH_CHECK(t.layer_kind(6).window == AttentionWindow::Sliding);
  // written back by make-model's to_json_text, the same config
  const ModelConfig back = ModelConfig::parse(p.to_json_text(), "back");
  for (int64_t i = 0; i < 7; ++i) CATCH_CHECK(back.layer_kind(i) == p.layer_kind(i));
  CATCH_CHECK(back.query_pre_attn_scalar == 24.0);
  CATCH_CHECK(back.rope_local_theta == 500.0);
  CATCH_CHECK(back.tie_word_embeddings);
  // soft-capping off by default (Gemma3TextConfig), served where asked; refused by name: an
  // unknown activation, bidirectional attention
  CATCH_CHECK(c.attn_logit_softcapping == 0);
  CATCH_CHECK(c.final_logit_softcapping == 0);
  CATCH_CHECK(ModelConfig::parse(replace_once(gemma, "\"hidden_size\"", "\"final_logit_softcapping\": 30.0, \"hidden_size\""), "c").final_logit_softcapping == 30.0);
  CATCH_CHECK(config_error(replace_once(gemma, "\"hidden_size\"", "\"hidden_activation\": \"gelu\", \"hidden_size\"")).find("hidden_activation \"gelu\"") != std::string::npos);
  CATCH_CHECK(config_error(replace_once(gemma, "\"hidden_size\"", "\"use_bidirectional_attention\": true, \"hidden_size\"")).find("bidirectional") != std::string::npos);
  // a Llama with Gemma's activation is served: the kinds are not the row's alone
  const ModelConfig g = ModelConfig::parse(replace_once(kLlama, "\"hidden_size\"", "\"hidden_act\": \"gelu_pytorch_tanh\", \"hidden_size\""), "c");
  CATCH_CHECK(g.layer_kind(0).activation == Activation::GeluTanh);
  CATCH_CHECK(g.layer_kind(0).norm == NormForm::Llama);
}

// Issue 72: Qwen3-MoE's experts as Qwen3MoeConfig reads them.
CATCH_TEST_CASE("Qwen3-MoE's config: its experts, Qwen3MoeConfig's defaults, dense layers by step and list", "[config][moe]") {
  using namespace exspec;
  const ModelConfig d = ModelConfig::parse(moe_config(""), "config.json");
  CATCH_CHECK(d.arch == Arch::Qwen3Moe);
  CATCH_CHECK(d.experts.num_experts == 128);
  CATCH_CHECK(d.experts.top_k == 8);
  CATCH_CHECK(d.experts.intermediate_size == 768);
  CATCH_CHECK(!d.experts.norm_topk_prob);
  for (int64_t i = 0; i < 4; ++i) CATCH_CHECK(d.layer_kind(i).mlp == Mlp::Experts);

  const ModelConfig c = ModelConfig::parse(moe_config(R"(, "num_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "norm_topk_prob": true, "decoder_sparse_step": 2, "mlp_only_layers": [3])"), "config.json");
  CATCH_CHECK(c.experts.num_experts == 8);
  CATCH_CHECK(c.experts.norm_topk_prob);
  // (i + 1) % 2 != 0 skips layers 0 and 2; layer 3 is listed
  CATCH_CHECK(c.layer_kind(0).mlp == Mlp::Dense);
  CATCH_CHECK(c.layer_kind(1).mlp == Mlp::Experts);
  CATCH_CHECK(c.layer_kind(2).mlp == Mlp::Dense);
  CATCH_CHECK(c.layer_kind(3).mlp == Mlp::Dense);
  const ModelConfig back = ModelConfig::parse(c.to_json_text(), "written");
  CATCH_CHECK(back.experts.dense_layers == c.experts.dense_layers);
  CATCH_CHECK(back.experts.top_k == 2);
  CATCH_CHECK(back.experts.intermediate_size == 32);

  CATCH_CHECK(config_error(moe_config(R"(, "num_experts": 4, "num_experts_per_tok": 5)")).find("exceeds num_experts") != std::string::npos);
  CATCH_CHECK(config_error(moe_config(R"(, "mlp_only_layers": [4])")).find("mlp_only_layers holds 4") != std::string::npos);
  CATCH_CHECK(config_error(moe_config(R"(, "num_experts": 0)")).find("\"num_experts\" must be positive") != std::string::npos);
  // a dense architecture has no experts whatever config.json says
  CATCH_CHECK(ModelConfig::parse(moe_config(R"(, "num_experts": 8)", "Qwen3ForCausalLM"), "config.json").experts.num_experts == 0);
}
