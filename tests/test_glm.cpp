// GLM and GLM-4-0414 pieces checked on their own: the partial interleaved rotary embedding against
// the rotation written out pair by pair, the generated checkpoints and tokenizer, and loader
// errors that name the GLM tensor at fault. (The fused MLP, the sandwich norms and whole forwards
// are checked against the independent Python reference: tests/reference/check.sh.)
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "model/checkpoint.h"
#include "model/decoder.h"
#include "model/io_util.h"
#include "model/tools/make_model.h"
#include "model/rope.h"
#include "model/safetensors.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/support.h"

using namespace exspec;
namespace fs = std::filesystem;

namespace {

std::string load_error(const std::string& dir) {
  try {
    Decoder::load(dir, {at::kDouble, at::kCPU});
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// A copy of `src` whose model.safetensors went through `edit` (name -> tensor, in file order).
std::string edited_copy(const std::string& src, const std::string& name,
                        const std::function<void(std::vector<std::pair<std::string, at::Tensor>>&)>& edit) {
  const std::string dir = test::scratch_dir() + "/" + name;
  fs::create_directories(dir);
  for (const char* f : {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"})
    fs::copy_file(src + "/" + f, dir + "/" + f, fs::copy_options::overwrite_existing);
  auto file = SafetensorsFile::open(src + "/model.safetensors");
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& [n, e] : file->entries()) tensors.emplace_back(n, file->tensor(n).clone());
  edit(tensors);
  write_safetensors(dir + "/model.safetensors", tensors);
  return dir;
}

}  // namespace

CATCH_TEST_CASE("GLM rope: the first rotary dims turn as (even, odd) pairs, the rest pass through", "[glm][rope]") {
  ModelConfig c = preset_config("glm4", "tiny");  // head_dim 32, partial 0.5: 16 dims rotate
  const int64_t D = c.head_dim, R = c.rotary_dim();
  CATCH_REQUIRE(R == D / 2);
  Rope rope(c, at::kCPU);
  const int64_t T = 7, H = 2;
  at::Tensor pos = at::arange(T, at::kLong).view({1, T}) * 13;  // large angles, all bands differ
  auto [cos, sin] = rope.tables(pos, at::kDouble);
  CATCH_REQUIRE(cos.size(-1) == R);
  at::Tensor x = at::randn({1, H, T, D}, at::kDouble);
  at::Tensor y = rope.apply(x, cos, sin);
  double worst = 0;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T; ++t) {
      const double p = 13.0 * t;
      for (int64_t i = 0; i < R / 2; ++i) {
        const double a = p / std::pow(c.rope_theta, 2.0 * i / R);
        const double x0 = x[0][h][t][2 * i].item<double>(), x1 = x[0][h][t][2 * i + 1].item<double>();
        worst = std::max(worst, std::abs(y[0][h][t][2 * i].item<double>() - (x0 * std::cos(a) - x1 * std::sin(a))));
        worst = std::max(worst, std::abs(y[0][h][t][2 * i + 1].item<double>() - (x1 * std::cos(a) + x0 * std::sin(a))));
      }
    }
  CATCH_CHECK(worst < 1e-12);
  CATCH_CHECK(at::equal(y.narrow(-1, R, D - R), x.narrow(-1, R, D - R)));  // bit-exact pass-through
}

CATCH_TEST_CASE("generated GLM checkpoints carry HF's tensor names, GLM-4's chat tokens and EOS ids", "[glm]") {
  for (const char* arch : {"glm", "glm4"}) {
    CATCH_INFO(arch);
    const std::string dir = test::model_dir(arch);
    auto f = SafetensorsFile::open(dir + "/model.safetensors");
    const ModelConfig c = ModelConfig::load(dir);
    const std::vector<int64_t> gate_up{2 * c.intermediate_size, c.hidden_size};
    CATCH_CHECK(f->entries().at("model.layers.0.mlp.gate_up_proj.weight").shape == gate_up);
    CATCH_CHECK_FALSE(f->contains("model.layers.0.mlp.gate_proj.weight"));
    CATCH_CHECK(f->contains("model.layers.0.self_attn.q_proj.bias"));
    CATCH_CHECK_FALSE(f->contains("model.layers.0.self_attn.o_proj.bias"));
    const bool sandwich = std::string(arch) == "glm4";
    CATCH_CHECK(f->contains("model.layers.3.post_self_attn_layernorm.weight") == sandwich);
    CATCH_CHECK(f->contains("model.layers.3.post_mlp_layernorm.weight") == sandwich);
    CATCH_CHECK(c.eos_ids.size() == 3);  // </s>, <|user|>, <|observation|>
    const Tokenizer tok = Tokenizer::load(dir);
    CATCH_CHECK(tok.vocab_size() == c.vocab_size);
    CATCH_CHECK(tok.token_to_id("<|user|>") == c.eos_ids[1]);
    CATCH_CHECK(tok.token_to_id("<|observation|>") == c.eos_ids[2]);
    CATCH_CHECK(tok.chat_template().rfind("[gMASK]<sop>", 0) == 0);
    CATCH_CHECK(tok.encode("[gMASK]<sop><|user|>\nhi", false, /*allow_special=*/true) ==
                std::vector<int64_t>{*tok.token_to_id("[gMASK]"), *tok.token_to_id("<sop>"), c.eos_ids[1], '\n', 'h', 'i'});
  }
  CATCH_CHECK(ModelConfig::load(test::model_dir("glm4")).head_dim * 4 != preset_config("glm4", "tiny").hidden_size);
}

CATCH_TEST_CASE("GLM loader errors name the missing or mis-shaped tensor", "[glm][checkpoint]") {
  const std::string src = test::model_dir("glm4");
  const std::string no_gate_up = edited_copy(src, "glm4-no-gate-up", [](auto& ts) {
    for (auto it = ts.begin(); it != ts.end(); ++it)
      if (it->first == "model.layers.2.mlp.gate_up_proj.weight") {
        ts.erase(it);
        return;
      }
  });
  CATCH_CHECK_THAT(load_error(no_gate_up), Catch::Contains("no tensor \"model.layers.2.mlp.gate_up_proj.weight\""));

  const std::string bad_norm = edited_copy(src, "glm4-bad-post-norm", [](auto& ts) {
    for (auto& [n, t] : ts)
      if (n == "model.layers.1.post_mlp_layernorm.weight") t = t.narrow(0, 0, t.size(0) - 1).clone();
  });
  CATCH_CHECK_THAT(load_error(bad_norm), Catch::Contains("\"model.layers.1.post_mlp_layernorm.weight\" has shape [63]"));

  const std::string half_gate_up = edited_copy(src, "glm4-half-gate-up", [](auto& ts) {
    for (auto& [n, t] : ts)
      if (n == "model.layers.0.mlp.gate_up_proj.weight") t = t.narrow(0, 0, t.size(0) / 2).clone();
  });
  CATCH_CHECK_THAT(load_error(half_gate_up),
                   Catch::Contains("\"model.layers.0.mlp.gate_up_proj.weight\" has shape [128, 64], config.json "
                                   "implies [256, 64]"));

  // A GLM checkpoint read as GLM-4-0414 lacks the sandwich norms: named, not a crash.
  const std::string as_glm4 = test::scratch_dir() + "/glm-as-glm4";
  fs::create_directories(as_glm4);
  for (const char* f : {"model.safetensors", "generation_config.json", "tokenizer.json", "tokenizer_config.json"})
    fs::copy_file(test::model_dir("glm") + "/" + f, as_glm4 + "/" + f, fs::copy_options::overwrite_existing);
  ModelConfig c = ModelConfig::load(test::model_dir("glm"));
  c.arch = Arch::Glm4;
  c.sandwich_norms = true;
  write_text_file(as_glm4 + "/config.json", c.to_json_text());
  CATCH_CHECK_THAT(load_error(as_glm4), Catch::Contains("no tensor \"model.layers.0.post_self_attn_layernorm.weight\""));
}
