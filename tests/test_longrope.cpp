// Issue 71: Phi-3.5's and Phi-4-mini's longrope scaling, as config.json states it and as a load
// serves it (one set of factors: choose_longrope).
#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "model/model_config.h"
#include "model/rope.h"
#include "model/seq_request.h"
#include "model/tools/make_model.h"
#include "tests/support.h"

using namespace exspec;
using test::config_error;
using test::replace_once;

namespace {

// A config of Phi-3.5-mini's form, small: head_dim 16, every dim rotating, so 8 factors of each kind.
std::string phi3(const std::string& scaling, const std::string& top = R"("original_max_position_embeddings": 4096,)") {
  return R"({"architectures": ["Phi3ForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
  "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 100,
  "max_position_embeddings": 131072, )" + top + R"( "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
  "rope_scaling": )" + scaling + "}";
}

const char* kShort = "[1.0, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06, 1.1]";
const char* kLong = "[1.0, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 40.1]";

std::string longrope(const std::string& extra = "", const char* type = "longrope") {
  return std::string(R"({"type": ")") + type + R"(", "short_factor": )" + kShort + R"(, "long_factor": )" + kLong + extra + "}";
}

}  // namespace

CATCH_TEST_CASE("longrope's config: factors as float32, the original at the top, HF's attention factor", "[config][longrope]") {
  const ModelConfig c = ModelConfig::parse(phi3(longrope()), "config.json");
  const RopeScaling& rs = c.rope_scaling;
  CATCH_REQUIRE(rs.type == "longrope");
  CATCH_CHECK(rs.original_max_position_embeddings == 4096);
  CATCH_REQUIRE(rs.short_factors.size() == 8);
  CATCH_CHECK(rs.short_factors[1] == static_cast<double>(1.01f));  // torch.tensor(..., float32)
  CATCH_CHECK(rs.short_factors[1] != 1.01);
  CATCH_CHECK(rs.long_factors[7] == static_cast<double>(40.1f));
  // Phi3: factor = max_position_embeddings / original = 32, whatever rope_scaling's "factor".
  CATCH_CHECK(rs.attention_factor == std::sqrt(1.0 + std::log(32.0) / std::log(4096.0)));
  CATCH_CHECK(ModelConfig::parse(phi3(longrope(R"(, "factor": 2.0)")), "c").rope_scaling.attention_factor == rs.attention_factor);
  CATCH_CHECK(ModelConfig::parse(phi3(longrope(R"(, "attention_factor": 1.25)")), "c").rope_scaling.attention_factor == 1.25);
  CATCH_CHECK(ModelConfig::parse(phi3(longrope("", "su")), "c").rope_scaling.type == "longrope");  // the old name
  // Without the original at the top: rope_scaling's, else Phi3Config's 4096; the factor follows from it.
  const RopeScaling own =
      ModelConfig::parse(phi3(longrope(R"(, "factor": 8.0, "original_max_position_embeddings": 1024)"), ""), "c").rope_scaling;
  CATCH_CHECK(own.original_max_position_embeddings == 1024);
  CATCH_CHECK(own.attention_factor == std::sqrt(1.0 + std::log(128.0) / std::log(1024.0)));
  const RopeScaling dflt = ModelConfig::parse(phi3(longrope(), ""), "c").rope_scaling;
  CATCH_CHECK(dflt.original_max_position_embeddings == 4096);
  CATCH_CHECK(dflt.attention_factor == rs.attention_factor);
  // A class with no original of its own: the whole context, and rope_scaling's factor (default 1).
  std::string llama = replace_once(phi3(longrope(R"(, "factor": 4.0)"), ""), "Phi3ForCausalLM", "LlamaForCausalLM");
  const RopeScaling l = ModelConfig::parse(llama, "c").rope_scaling;
  CATCH_CHECK(l.original_max_position_embeddings == 131072);
  CATCH_CHECK(l.attention_factor == std::sqrt(1.0 + std::log(4.0) / std::log(131072.0)));
  llama = replace_once(phi3(longrope(), ""), "Phi3ForCausalLM", "LlamaForCausalLM");
  CATCH_CHECK(ModelConfig::parse(llama, "c").rope_scaling.attention_factor == 1.0);
}

CATCH_TEST_CASE("longrope config errors name the problem", "[config][longrope]") {
  CATCH_CHECK_THAT(config_error(phi3(R"({"type": "longrope", "short_factor": [1.0]})")), Catch::Contains("long_factor"));
  CATCH_CHECK_THAT(config_error(phi3(R"({"type": "longrope", "short_factor": [1.0], "long_factor": [1.0]})")),
                   Catch::Contains("need 8 values each"));
  CATCH_CHECK_THAT(config_error(phi3(R"({"type": "longrope", "short_factor": [1, 1, 1, 1, 1, 1, 1, 0], "long_factor": [1, 1, 1, 1, 1, 1, 1, 1]})")),
                   Catch::Contains("positive"));
  CATCH_CHECK_THAT(config_error(phi3(R"({"type": "yarn", "factor": 4.0})")), Catch::Contains("supported: default, linear, llama3, longrope"));
}

CATCH_TEST_CASE("a load serves one set of longrope factors: short within the original context, or long", "[config][longrope]") {
  const ModelConfig c = ModelConfig::parse(phi3(longrope()), "config.json");
  const ModelConfig s = choose_longrope(c, false), l = choose_longrope(c, true);
  CATCH_CHECK(s.rope_scaling.factors == c.rope_scaling.short_factors);
  CATCH_CHECK(s.max_position_embeddings == 4096);  // HF takes the short factors up to here
  CATCH_CHECK_FALSE(s.rope_scaling.long_context);
  CATCH_CHECK(l.rope_scaling.factors == c.rope_scaling.long_factors);
  CATCH_CHECK(l.max_position_embeddings == 131072);
  CATCH_CHECK(l.rope_scaling.long_context);
  // A request past the short factors' context says where the long ones go.
  SeqRequest r{std::vector<int64_t>(4000, 1), 200, {}};
  try {
    validate_request(s, r);
    CATCH_FAIL("a request past 4096 tokens was taken");
  } catch (const std::invalid_argument& e) {
    CATCH_CHECK_THAT(e.what(), Catch::Contains("exceeds the model's context of 4096 tokens") &&
                                   Catch::Contains("--longrope long serves up to 131072"));
  }
  CATCH_CHECK_NOTHROW(validate_request(l, r));
  const ModelConfig llama = preset_config("llama", "tiny");
  CATCH_CHECK(choose_longrope(llama, false).max_position_embeddings == llama.max_position_embeddings);
  CATCH_CHECK(choose_longrope(llama, true).rope_scaling.factors.empty());
}

CATCH_TEST_CASE("longrope's tables: 1 / (factor * base^(2i/d)) and cos, sin scaled by the attention factor", "[rope][longrope]") {
  const ModelConfig c = ModelConfig::parse(phi3(longrope()), "config.json");
  for (bool long_context : {false, true}) {
    const ModelConfig chosen = choose_longrope(c, long_context);
    const Rope rope(chosen, at::kCPU);
    const auto& f = long_context ? c.rope_scaling.long_factors : c.rope_scaling.short_factors;
    const at::Tensor inv = rope.inv_freq();
    for (int64_t i = 0; i < 8; ++i)
      CATCH_CHECK(inv[i].item<double>() == Approx(1.0 / (f[i] * std::pow(10000.0, 2.0 * i / 16.0))).epsilon(1e-14));
    const at::Tensor pos = at::arange(0, 300, at::TensorOptions().dtype(at::kLong)).unsqueeze(0);
    auto [cos, sin] = rope.tables(pos, at::kDouble);
    const double af = c.rope_scaling.attention_factor;
    CATCH_CHECK(cos[0][0][0][3].item<double>() == af);  // position 0: cos 1, sin 0
    CATCH_CHECK(sin[0][0][0][3].item<double>() == 0.0);
    const double angle = 299 * inv[5].item<double>();
    CATCH_CHECK(cos[0][0][299][5].item<double>() == Approx(af * std::cos(angle)).epsilon(1e-13));
    CATCH_CHECK(sin[0][0][299][13].item<double>() == Approx(af * std::sin(angle)).epsilon(1e-13));  // rotate-half: i + 8
  }
}

CATCH_TEST_CASE("make-model --longrope writes a config that reads back the same", "[config][longrope]") {
  const ModelConfig c = with_longrope(preset_config("phi3", "tiny"));  // rotary 12 of 16 dims: 6 factors
  const ModelConfig back = ModelConfig::parse(c.to_json_text(), "config.json");
  const RopeScaling &a = c.rope_scaling, &b = back.rope_scaling;
  CATCH_CHECK(b.type == "longrope");
  CATCH_CHECK(b.short_factors.size() == 6);
  CATCH_CHECK(b.short_factors == a.short_factors);
  CATCH_CHECK(b.long_factors == a.long_factors);
  CATCH_CHECK(b.original_max_position_embeddings == c.max_position_embeddings / 4);
  CATCH_CHECK(b.attention_factor == a.attention_factor);
  CATCH_CHECK(a.attention_factor > 1.0);
  CATCH_CHECK_THROWS_WITH(with_longrope(preset_config("llama", "tiny")), Catch::Contains("--arch phi3"));
}
