// Mistral's sliding window (issue 71): a sliding layer's query sees its own position and the
// window - 1 before it, in every forward the decoder has (alone, left-padded, over a KV store in
// chunks). The whole decoding against Hugging Face's definition is the reference's
// (tests/reference: check.sh, the grid); every mode against plain decoding is the pipeline's and
// the sampling sweep's.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include "model/attention.h"
#include "model/checkpoint.h"
#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "tests/support.h"

using namespace exspec;

namespace {

// The generated Mistral's weights under its config with this window (0: full attention).
std::shared_ptr<const Decoder> with_window(int64_t window) {
  const std::string dir = test::model_dir("mistral");
  ModelConfig c = ModelConfig::load(dir);
  c.sliding_window = window;
  return std::make_shared<const Decoder>(c, load_weights(dir, c, at::kDouble, at::kCPU), LoadOptions{at::kDouble, at::kCPU});
}

at::Tensor alone(const Decoder& m, const std::vector<int64_t>& seq) { return test::alone_logits(m, seq); }

double max_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

CATCH_TEST_CASE("Mistral's config: sliding_window given, null or absent, and every layer's kind from it", "[config][window]") {
  const ModelConfig c = ModelConfig::load(test::model_dir("mistral"));
  CATCH_CHECK(c.arch == Arch::Mistral);
  CATCH_CHECK(c.sliding_window == c.max_position_embeddings / 32);  // make-model's preset
  for (int64_t i = 0; i < c.num_layers; ++i) CATCH_CHECK(c.layer_kind(i).window == AttentionWindow::Sliding);
  std::string text = c.to_json_text();
  const auto at = text.find("\"sliding_window\"");
  CATCH_REQUIRE(at != std::string::npos);
  const auto end = text.find(',', at);
  const std::string null_window = text.substr(0, at) + "\"sliding_window\": null" + text.substr(end);
  const ModelConfig n = ModelConfig::parse(null_window, "null");
  CATCH_CHECK(n.sliding_window == 0);
  CATCH_CHECK(n.layer_kind(0).window == AttentionWindow::Full);
  const ModelConfig a = ModelConfig::parse(text.substr(0, at) + text.substr(end + 1), "absent");
  CATCH_CHECK(a.sliding_window == 4096);  // MistralConfig's default
  CATCH_CHECK_THROWS_WITH(ModelConfig::parse(text.substr(0, at) + "\"sliding_window\": 0" + text.substr(end), "zero"),
                          Catch::Contains("\"sliding_window\" must be positive"));
}

CATCH_TEST_CASE("a sliding window hides exactly the keys it has passed", "[decoder][window]") {
  const auto full = with_window(0), five = with_window(5);
  const auto seq = test::mixed_prompts(1, 14, 14, full->config().vocab_size, 3)[0];
  const at::Tensor f = alone(*full, seq), w = alone(*five, seq);
  // Positions 0..4 see no further back than the window: the same computation, the same bits.
  CATCH_CHECK(at::equal(f.narrow(0, 0, 5), w.narrow(0, 0, 5)));
  for (int64_t t = 5; t < 14; ++t) CATCH_CHECK(max_diff(f[t], w[t]) > 1e-6);
  // Each of the 4 layers carries a token at most 4 positions on: tokens 0 and 1 changed reach
  // position 1 + 4 * 4 = 17 and no further; with full attention they reach every position.
  auto longer = test::mixed_prompts(1, 24, 24, full->config().vocab_size, 4)[0];
  auto changed = longer;
  changed[0] = (changed[0] + 1) % full->config().vocab_size;
  changed[1] = (changed[1] + 1) % full->config().vocab_size;
  const at::Tensor a = alone(*five, longer), b = alone(*five, changed);
  CATCH_CHECK(max_diff(a[17], b[17]) > 0);
  CATCH_CHECK(at::equal(a.narrow(0, 18, 6), b.narrow(0, 18, 6)));
  CATCH_CHECK(max_diff(alone(*full, longer)[23], alone(*full, changed)[23]) > 0);  // full attention reaches them
}

// (A left-padded batch against each row alone: tests/test_decoder.cpp, Mistral's section.)
CATCH_TEST_CASE("a sliding window over a KV store: rows fed in chunks equal each row alone",
                "[decoder][window]") {
  const auto m = with_window(5);
  const auto prompts = test::mixed_prompts(6, 1, 13, m->config().vocab_size, 7);
  {  // a store, each row fed in chunks of 3 (right-padded rows of different starts)
    KVStore st = m->new_store(6, 16);
    std::vector<at::Tensor> got(prompts.size());
    for (int64_t from = 0; from < 13; from += 3) {
      std::vector<SlotSpan> rows;
      std::vector<size_t> which;
      std::vector<int64_t> flat;
      for (size_t i = 0; i < prompts.size(); ++i) {
        const int64_t n = std::min<int64_t>(static_cast<int64_t>(prompts[i].size()) - from, 3);
        if (n <= 0) continue;
        rows.push_back(SlotSpan{static_cast<int64_t>(i), from, n, {}});
        which.push_back(i);
        for (int64_t t = 0; t < 3; ++t) flat.push_back(t < n ? prompts[i][from + t] : 0);
      }
      const int64_t B = static_cast<int64_t>(rows.size());
      if (B == 0) break;
      const at::Tensor out = m->forward_slots(at::tensor(flat, at::kLong).view({B, 3}), rows, st, Decoder::Logits::All);
      for (int64_t r = 0; r < B; ++r) {
        at::Tensor part = out[r].narrow(0, 0, rows[r].count);
        at::Tensor& g = got[which[r]];
        g = g.defined() ? at::cat({g, part}) : part;
      }
    }
    double worst = 0;
    for (size_t i = 0; i < prompts.size(); ++i) worst = std::max(worst, max_diff(got[i], alone(*m, prompts[i])));
    CATCH_CHECK(worst < 1e-9);
  }
}

CATCH_TEST_CASE("Qwen2's window switch: the layers from max_window_layers on slide, or those layer_types names",
                "[config][window]") {
  const std::string text = ModelConfig::load(test::model_dir("qwen2")).to_json_text();  // 4 layers, no window
  auto with = [&](const std::string& fields) { return ModelConfig::parse("{" + fields + ", " + text.substr(text.find('{') + 1), "qwen2"); };
  auto kinds = [](const ModelConfig& c) {
    std::string out;
    for (int64_t i = 0; i < c.num_layers; ++i) out += c.layer_kind(i).window == AttentionWindow::Sliding ? 'S' : 'F';
    return out;
  };
  const ModelConfig off = with("\"sliding_window\": 7, \"max_window_layers\": 1");  // use_sliding_window false
  CATCH_CHECK(off.sliding_window == 0);
  CATCH_CHECK(kinds(off) == "FFFF");
  const ModelConfig on = with("\"use_sliding_window\": true, \"sliding_window\": 7, \"max_window_layers\": 1");
  CATCH_CHECK(on.sliding_window == 7);
  CATCH_CHECK(kinds(on) == "FSSS");
  CATCH_CHECK(kinds(with("\"use_sliding_window\": true")) == "FFFF");  // Qwen2Config's max_window_layers: 28
  const ModelConfig typed = with("\"use_sliding_window\": true, \"layer_types\": [\"sliding_attention\", \"full_attention\", "
                                 "\"sliding_attention\", \"full_attention\"]");
  CATCH_CHECK(typed.sliding_window == 4096);
  CATCH_CHECK(kinds(typed) == "SFSF");
  CATCH_CHECK(kinds(ModelConfig::parse(typed.to_json_text(), "written")) == "SFSF");
  CATCH_CHECK_THROWS_WITH(with("\"use_sliding_window\": true, \"layer_types\": [\"full_attention\"]"),
                          Catch::Contains("layer_types\" must list num_hidden_layers entries"));
  CATCH_CHECK_THROWS_WITH(with("\"use_sliding_window\": true, \"layer_types\": [\"chunked_attention\", \"full_attention\", "
                               "\"full_attention\", \"full_attention\"]"),
                          Catch::Contains("layer_types holds \"chunked_attention\" (sliding_attention"));
  CATCH_CHECK_THROWS_WITH(with("\"use_sliding_window\": true, \"max_window_layers\": -1"),
                          Catch::Contains("max_window_layers\" must be a non-negative integer"));
}
