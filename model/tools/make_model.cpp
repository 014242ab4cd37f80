#include "model/tools/make_model.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/checkpoint.h"
#include "model/io_util.h"
#include "model/layer_weights.h"
#include "model/safetensors.h"
#include "model/window_pattern.h"

namespace exspec {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int64_t kBos = 256, kEos = 257, kVocab = 258;
// GLM checkpoints add GLM-4's chat tokens after the bytes; <|user|> and <|observation|> end an
// assistant turn, so (as in GLM-4's generation_config.json) they are EOS ids besides </s>.
const char* const kGlmSpecials[] = {"[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"};
constexpr int64_t kGlmUser = 261, kGlmObservation = 263, kGlmVocab = 264;
// GLM-4-9B-chat's template without its tools branch (tokenizer_config.json "chat_template").
const char* const kGlmChatTemplate =
    "[gMASK]<sop>{% for item in messages %}{% if item['content'] %}<|{{ item['role'] }}|>{{ item['metadata'] }}\n"
    "{{ item['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";

// splitmix64 + Box-Muller: the same weights on every machine and libtorch version.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = uniform(), u2 = uniform();
    double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * M_PI * u2);
    has_spare_ = true;
    return r * std::cos(2.0 * M_PI * u2);
  }

 private:
  uint64_t s_;
  bool has_spare_ = false;
  double spare_ = 0;
};

uint64_t name_seed(uint64_t seed, const std::string& name) {
  return seed * 0x100000001b3ULL ^ std::hash<std::string>{}(name);
}

at::Tensor random_tensor(const std::vector<int64_t>& shape, uint64_t seed, double mean, double std) {
  at::Tensor t = at::empty(shape, at::kFloat);
  float* p = t.data_ptr<float>();
  Rng rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(mean + std * rng.normal());
  return t;
}

at::ScalarType storage_dtype(const std::string& d) {
  if (d == "float32") return at::kFloat;
  if (d == "float64") return at::kDouble;
  if (d == "float16") return at::kHalf;
  if (d == "bfloat16") return at::kBFloat16;
  throw std::invalid_argument("unknown --dtype \"" + d + "\" (float32, float64, float16, bfloat16)");
}

void write_weights(const std::string& dir, const std::vector<std::pair<std::string, at::Tensor>>& tensors, int shards) {
  const std::map<std::string, std::string> meta{{"format", "pt"}};
  if (shards <= 1) {
    write_safetensors(dir + "/model.safetensors", tensors, meta);
    return;
  }
  json index{{"metadata", json::object()}, {"weight_map", json::object()}};
  const size_t per = (tensors.size() + shards - 1) / shards;
  for (int s = 0; s < shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, shards);
    std::vector<std::pair<std::string, at::Tensor>> part;
    for (size_t i = s * per; i < std::min(tensors.size(), (s + 1) * per); ++i) {
      part.push_back(tensors[i]);
      index["weight_map"][tensors[i].first] = name;
    }
    write_safetensors(dir + "/" + name, part, meta);
  }
  write_text_file(dir + "/model.safetensors.index.json", index.dump(2) + "\n");
}

void write_generation_config(const std::string& dir, const ModelConfig& c) {
  json g{{"bos_token_id", c.bos_id.value_or(kBos)}, {"do_sample", false}};
  g["eos_token_id"] = c.eos_ids.size() == 1 ? json(c.eos_ids[0]) : json(c.eos_ids);
  write_text_file(dir + "/generation_config.json", g.dump(2) + "\n");
}

// GPT-2's printable stand-ins for bytes, as byte-level BPE vocabularies spell them.
std::string byte_symbol(int b) {
  std::vector<int> bs;
  for (int c = '!'; c <= '~'; ++c) bs.push_back(c);
  for (int c = 0xA1; c <= 0xAC; ++c) bs.push_back(c);
  for (int c = 0xAE; c <= 0xFF; ++c) bs.push_back(c);
  int cp = -1, extra = 0;
  for (int x = 0; x < 256; ++x) {
    bool printable = std::find(bs.begin(), bs.end(), x) != bs.end();
    int code = printable ? x : 256 + extra++;
    if (x == b) cp = code;
  }
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else {
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return s;
}

// Chosen per preset so that a one-layer draft agrees with its target about as often as real
// pairs do (README has the acceptance measured for each).
double default_damp_std(const std::string& preset) { return preset == "demo" || preset == "1b" ? 0.0003 : 0.0005; }

// gemma2's caps: low enough that drawn weights' scores and logits reach into tanh's bend.
constexpr double kGemma2AttnCap = 1.0, kGemma2FinalCap = 2.0;

// Post-norm weights of damped GLM-4 layers: damp_std times this.
constexpr double kPostNormDamp = 80.0;  // chosen so that a one-layer draft agrees often, not always

// The presets' shapes, one row each.
struct Preset {
  const char* name;
  int64_t hidden, intermediate, layers, heads, kv_heads, context, vocab;
};
constexpr Preset kPresets[] = {
    {"tiny", 64, 128, 4, 4, 2, 512, kVocab},
    {"small", 256, 688, 8, 8, 4, 2048, kVocab},
    // The smallest shape whose every product is whole super-blocks of 256 (GGUF's Q4_K, Q6_K):
    // the K-quant oracle sweeps' model.
    {"kquant", 256, 512, 4, 4, 2, 512, kVocab},
    {"demo", 512, 1408, 12, 8, 4, 2048, kVocab},
    // Llama-3.2-1B's body on our 258-token vocabulary: 0.97 B parameters, GPU-sized work per token.
    {"1b", 2048, 8192, 16, 32, 8, 4096, kVocab},
    // The shape of a 150M-parameter Llama with a real-sized vocabulary (Llama-2's 32000): where
    // the lm_head is a fifth of the weights a decode step reads. Its tokenizer still spells
    // only the 258 byte-level ids; the others exist for the forward-pass benchmarks.
    {"150m", 768, 2048, 16, 12, 4, 2048, 32000},
    // Issue 72's benchmark target with --arch qwen3moe: 48 experts of 384, 8 a token, on 16
    // layers: 1.0 B parameters, 0.23 B of them read a token.
    {"moe", 1024, 3072, 16, 16, 4, 4096, kVocab},
};

int64_t layer_of(const std::string& name) { return std::stoll(name.substr(std::string("model.layers.").size())); }

}  // namespace

ModelConfig preset_config(const std::string& arch, const std::string& preset) {
  ModelConfig c;
  const ArchitectureRow* row = architecture_by_name(arch);
  if (!row) throw std::invalid_argument("unknown --arch \"" + arch + "\" (" + architecture_names() + ")");
  c.arch = row->arch;

  const Preset* p = nullptr;
  std::string names;
  for (const Preset& q : kPresets) {
    if (preset == q.name) p = &q;
    names += std::string(names.empty() ? "" : ", ") + q.name;
  }
  if (!p) throw std::invalid_argument("unknown --preset \"" + preset + "\" (" + names + ")");
  c.hidden_size = p->hidden, c.intermediate_size = p->intermediate, c.num_layers = p->layers;
  c.num_heads = p->heads, c.num_kv_heads = p->kv_heads, c.max_position_embeddings = p->context;
  c.vocab_size = p->vocab;
  c.head_dim = c.hidden_size / c.num_heads;
  c.rms_norm_eps = 1e-6;
  c.bos_id = kBos;
  c.eos_ids = {kEos};
  // What the architecture's layers are (its row), then this preset's choices for it.
  c.attention_bias = row->qkv_bias || row->attention_bias_default;
  if (row->partial_rotary_default > 0) c.partial_rotary_factor = row->partial_rotary_default;
  c.take_row_layout();
  switch (c.arch) {
    case Arch::Llama:  // GQA and Llama 3.1 rope scaling (with a short original context, so it bites)
      c.rope_theta = 500000.0;
      c.rope_scaling.type = "llama3";
      c.rope_scaling.factor = 8.0;
      c.rope_scaling.low_freq_factor = 1.0;
      c.rope_scaling.high_freq_factor = 4.0;
      c.rope_scaling.original_max_position_embeddings = c.max_position_embeddings / 4;
      break;
    case Arch::Qwen2:
      c.rope_theta = 1000000.0;
      break;
    case Arch::Qwen3:  // tied embeddings, head_dim not hidden/heads
      c.rope_theta = 1000000.0;
      c.tie_word_embeddings = true;
      c.head_dim = 2 * c.hidden_size / c.num_heads;
      break;
    case Arch::Glm:   // GLM-4-9B-chat-hf
    case Arch::Glm4:  // GLM-4-0414; here also a head_dim that is not hidden/heads
      c.rope_theta = 10000.0;
      if (c.arch == Arch::Glm4) c.head_dim = 2 * c.hidden_size / c.num_heads;
      c.vocab_size = kGlmVocab;
      c.eos_ids = {kEos, kGlmUser, kGlmObservation};
      break;
    case Arch::Mistral:  // a window of a 32nd of the context, so that the tests' sequences outgrow it
      c.rope_theta = 1000000.0;
      c.sliding_window = c.max_position_embeddings / 32;
      break;
    case Arch::Phi3:  // Phi-4-mini's partial rope and tied head, Phi-3-mini's window
      c.partial_rotary_factor = 0.75;
      c.tie_word_embeddings = true;
      c.sliding_window = c.max_position_embeddings / 32;
      break;
    case Arch::Gemma3:  // tied head, a head_dim that is not hidden / heads, linear scaling on the
      // full layers (4B and up), and a window of a 32nd of the context on all but each 6th layer
      // (each 2nd where there are fewer than 6). query_pre_attn_scalar is the head_dim, as in
      // every Gemma 3 but 27B: GGUF has no key for it (the reference grid tests another).
      c.rope_theta = 1000000.0;
      c.rope_scaling.type = "linear";
      c.rope_scaling.factor = 8.0;
      c.tie_word_embeddings = true;
      c.head_dim = 2 * c.hidden_size / c.num_heads;
      c.query_pre_attn_scalar = static_cast<double>(c.head_dim);
      c.sliding_window = c.max_position_embeddings / 32;
      c.layer_windows = windows_but_each(c.num_layers, c.num_layers < 6 ? 2 : 6);
      break;
    case Arch::Gemma2:  // Gemma 3's tied head and head_dim, one rope, each 2nd layer full, and caps low
      // enough to bite on drawn weights (Gemma 2's own 50 and 30 would leave these scores and
      // logits as they are)
      c.rope_theta = 10000.0;
      c.tie_word_embeddings = true;
      c.head_dim = 2 * c.hidden_size / c.num_heads;
      c.query_pre_attn_scalar = static_cast<double>(c.head_dim);
      c.sliding_window = c.max_position_embeddings / 32;
      c.layer_windows = windows_but_each(c.num_layers, 2);
      c.attn_logit_softcapping = kGemma2AttnCap;
      c.final_logit_softcapping = kGemma2FinalCap;
      break;
    case Arch::Qwen3Moe: {  // Qwen3's attention; 8 experts of half the MLP's width, 2 a row, on every layer
      c.rope_theta = 1000000.0;
      c.tie_word_embeddings = true;
      c.head_dim = 2 * c.hidden_size / c.num_heads;
      const bool bench = preset == "moe";  // Qwen3-30B-A3B's proportions: 1 expert in 16 read
      c.experts.num_experts = bench ? 48 : 8;
      c.experts.top_k = bench ? 8 : 2;
      c.experts.intermediate_size = c.intermediate_size / (bench ? 8 : 2);
      c.experts.norm_topk_prob = true;  // as Qwen3-30B-A3B's config.json says
      break;
    }
  }
  return c;
}

void write_byte_tokenizer(const std::string& dir, int64_t max_length, bool glm) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_symbol(b)] = b;
  auto added = [](int64_t id, const char* content) {
    return json{{"id", id},           {"content", content}, {"single_word", false}, {"lstrip", false},
                {"rstrip", false},    {"normalized", false}, {"special", true}};
  };
  json byte_level{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}};
  json tok{{"version", "1.0"},
           {"truncation", nullptr},
           {"padding", nullptr},
           {"added_tokens", {added(kBos, "<s>"), added(kEos, "</s>")}},
           {"normalizer", nullptr},
           {"pre_tokenizer", byte_level},
           {"post_processor", nullptr},
           {"decoder", byte_level},
           {"model",
            {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
             {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false},
             {"ignore_merges", false}, {"vocab", vocab}, {"merges", json::array()}}}};
  if (glm)
    for (int64_t i = 0; i < kGlmVocab - kVocab; ++i) tok["added_tokens"].push_back(added(kVocab + i, kGlmSpecials[i]));
  write_text_file(dir + "/tokenizer.json", tok.dump(1) + "\n");
  json cfg{{"tokenizer_class", "PreTrainedTokenizerFast"},
           {"bos_token", "<s>"},
           {"eos_token", "</s>"},
           {"add_bos_token", false},
           {"add_eos_token", false},
           {"model_max_length", max_length}};
  if (glm) cfg["chat_template"] = kGlmChatTemplate;
  write_text_file(dir + "/tokenizer_config.json", cfg.dump(2) + "\n");
}

ModelConfig with_longrope(ModelConfig c) {
  if (c.arch != Arch::Phi3) throw std::invalid_argument("make-model --longrope is for --arch phi3");
  RopeScaling& rs = c.rope_scaling;
  rs = RopeScaling{};
  rs.type = "longrope";
  rs.original_max_position_embeddings = c.max_position_embeddings / 4;
  rs.factor = 4.0;
  rs.attention_factor = longrope_attention_factor(rs.factor, rs.original_max_position_embeddings);
  const int64_t n = c.rotary_dim() / 2;
  for (int64_t i = 0; i < n; ++i) {
    const double t = n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 1.0;
    rs.short_factors.push_back(static_cast<float>(1.0 + 0.1 * t));  // float32, as HF holds them
    rs.long_factors.push_back(static_cast<float>(std::pow(rs.factor, t)));
  }
  return c;
}

void make_model(const MakeModelOptions& o) {
  if (o.out.empty()) throw std::invalid_argument("make-model needs --out DIR");
  ModelConfig c = preset_config(o.arch, o.preset);
  if (o.longrope) c = with_longrope(std::move(c));
  const at::ScalarType dtype = storage_dtype(o.dtype);
  c.torch_dtype = o.dtype;
  if (o.attention_bias) c.attention_bias = true;
  fs::create_directories(o.out);

  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& [name, shape] : expected_weights(c)) {
    const uint64_t seed = name_seed(o.seed, name);
    double mean = 0.0, std = o.init_std;
    const double damp = o.damp_std >= 0 ? o.damp_std : default_damp_std(o.preset);
    const WeightRole role = weight_by_hf(c.arch, name)->role;  // model/layer_weights.h
    if (role == WeightRole::PostNorm) {
      // GLM-4-0414's post norms rescale each branch's output to their weight, whatever o_proj and
      // down_proj are: later layers are damped here instead (small weights around zero).
      if (layer_of(name) >= o.damp_from) mean = 0.0, std = damp * kPostNormDamp;
      else mean = 1.0, std = 0.1;
    } else if (role == WeightRole::Norm) {
      mean = 1.0, std = 0.1;  // not all ones, so a misapplied norm weight shows in the tests
    } else if (role == WeightRole::Out) {
      if (layer_of(name) >= o.damp_from) std = damp;
    } else if (role == WeightRole::Router) {
      std = 2.0 / std::sqrt(static_cast<double>(c.hidden_size));  // logits of spread about 2: each row prefers its experts
    }
    if (role == WeightRole::Norm || role == WeightRole::PostNorm) mean -= c.norm_offset;  // Gemma stores w of (1 + w)
    tensors.emplace_back(name, random_tensor(shape, seed, mean, std).to(dtype));
  }
  write_weights(o.out, tensors, o.shards);
  write_text_file(o.out + "/config.json", c.to_json_text());
  write_generation_config(o.out, c);
  write_byte_tokenizer(o.out, c.max_position_embeddings, c.arch == Arch::Glm || c.arch == Arch::Glm4);
}

void make_draft(const std::string& target_dir, int64_t layers, const std::string& out_dir) {
  ModelConfig c = ModelConfig::load(target_dir);
  if (layers < 1 || layers > c.num_layers)
    throw std::invalid_argument("--layers must be between 1 and the target's " + std::to_string(c.num_layers));
  // float64 holds every stored dtype exactly; the copy is written back in the target's dtype.
  WeightMap w = load_weights(target_dir, c, at::kDouble, at::kCPU);
  c.num_layers = layers;
  if (!c.layer_windows.empty()) c.layer_windows.resize(static_cast<size_t>(layers));  // the target's first layers
  auto& dense = c.experts.dense_layers;
  dense.erase(std::remove_if(dense.begin(), dense.end(), [&](int64_t i) { return i >= layers; }), dense.end());
  fs::create_directories(out_dir);
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& [name, shape] : expected_weights(c)) tensors.emplace_back(name, w.at(name));
  const at::ScalarType dtype = storage_dtype(c.torch_dtype == "bfloat16" || c.torch_dtype == "float16" ||
                                                    c.torch_dtype == "float64" ? c.torch_dtype : "float32");
  for (auto& t : tensors) t.second = t.second.to(dtype);
  write_weights(out_dir, tensors, 1);
  write_text_file(out_dir + "/config.json", c.to_json_text());
  write_generation_config(out_dir, c);
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
    if (fs::exists(target_dir + "/" + f))
      fs::copy_file(target_dir + "/" + f, out_dir + "/" + f, fs::copy_options::overwrite_existing);
}

}  // namespace exspec
