// GGUF files of our made checkpoints, written by tests/gguf/write_gguf.py as llama.cpp's
// converter writes them: read back by @huggingface/gguf (an independent reader) and by ours,
// and served: the same logits and tokens as the Hugging Face directory they came from.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/gguf_config.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/ggml_types.h"
#include "model/gguf_weights.h"
#include "model/linear.h"
#include "model/oracle/plain_decode.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/support.h"

using namespace exspec;

namespace {

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  CATCH_REQUIRE(p);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  if (status != 0) CATCH_FAIL("command failed: " << cmd << "\n" << out);
  return out;
}

// The checkpoint written as GGUF of `type` (made once per process).
std::string to_gguf(const std::string& hf_dir, const std::string& type, const std::string& extra = "") {
  const std::string out = test::scratch_dir() + "/" + std::filesystem::path(hf_dir).filename().string() + "-" + type +
                          (extra.empty() ? "" : "-" + std::to_string(std::hash<std::string>()(extra))) + ".gguf";
  if (!std::filesystem::exists(out))
    run(test::python() + " " EXSPEC_GGUF_TOOLS "/write_gguf.py " + hf_dir + " " + out + " --type " + type + " " + extra);
  return out;
}

at::Tensor logits_of(const Decoder& m, const std::vector<int64_t>& prompt) {
  const int64_t T = static_cast<int64_t>(prompt.size());
  KVCache c = new_dense_cache(m, 1);
  return dense_forward(m, at::tensor(prompt, at::kLong).view({1, T}), at::arange(T, at::kLong).view({1, T}),
                       at::ones({1, T}, at::kLong), c);
}

// The file under int8 with every 4-bit (Q4_0, Q5_0, IQ4_NL) matrix handed on as Q8_0 blocks, its
// type's exact conversion (model/gguf/ggml_types.h): the path the packed 4-bit kernel replaced.
std::shared_ptr<const Decoder> load_converted(const std::string& path) {
  auto file = gguf::GgufFile::open(path);
  ModelConfig c = gguf::config_from_gguf(*file);
  const gguf::GgufWeights w(file, c, at::kChar, at::kCPU);
  auto converted = [&w](const std::string& name) {
    at::Tensor t = w.take(name);
    if (t.dim() != 3 || t.scalar_type() != at::kByte) return t;  // tagged rows: [out, 1, type id + blocks]
    const gguf::WeightType& type = *gguf::weight_type(t[0][0][0].item<uint8_t>());
    if (type.int8 != gguf::Int8Path::Q4 || !type.convert) return t;  // IQ4_XS: no Q8_0 form
    const at::Tensor rows = t.select(1, 0).narrow(1, 1, t.size(2) - 1).contiguous();
    const int64_t n = rows.numel() / type.block_bytes, q8_bytes = gguf::row(gguf::TensorType::Q8_0).block_bytes;
    at::Tensor out = at::empty({t.size(0), rows.size(1) / type.block_bytes * q8_bytes}, at::kByte);
    for (int64_t b = 0; b < n; ++b) type.convert(rows.data_ptr<uint8_t>() + b * type.block_bytes, out.data_ptr<uint8_t>() + b * q8_bytes);
    return out;
  };
  return std::make_shared<const Decoder>(std::move(c), WeightSource(converted), LoadOptions{at::kChar, at::kCPU});
}

std::vector<SeqRequest> requests(int64_t vocab) {
  std::vector<SeqRequest> r;
  for (auto& p : test::mixed_prompts(4, 3, 20, vocab, 7)) {
    SeqRequest q;
    q.prompt = p;
    q.max_tokens = 24;
    r.push_back(q);
  }
  return r;
}

}  // namespace

CATCH_TEST_CASE("@huggingface/gguf reads the metadata and tensor table ours reads", "[gguf]") {
  const std::string node_modules = EXSPEC_GGUF_TOOLS "/node_modules/@huggingface/gguf";
  if (!std::filesystem::exists(node_modules)) CATCH_FAIL("run tests/gguf/fetch.sh first (" << node_modules << ")");
  for (const char* type : {"f32", "f16", "bf16", "q8_0"}) {
    for (const char* arch : {"llama", "qwen3"}) {
      const std::string extra = std::string(arch) == "qwen3" ? "--version 2 --alignment 64" : "";
      const std::string path = to_gguf(test::model_dir(arch), type, extra);
      CATCH_INFO(path);
      const auto theirs = nlohmann::json::parse(run("node " EXSPEC_GGUF_TOOLS "/read_gguf.mjs " + path));
      const auto ours = gguf::GgufFile::open(path);
      CATCH_CHECK(theirs["version"] == ours->version());
      CATCH_CHECK(std::stoull(theirs["tensor_data_offset"].get<std::string>()) == ours->data_offset());
      CATCH_REQUIRE(theirs["metadata"].size() == ours->metadata().size());
      for (const auto& [key, v] : ours->metadata()) {
        const auto& t = theirs["metadata"][key];
        CATCH_INFO(key);
        CATCH_CHECK(t["type"] == static_cast<uint32_t>(v.type));
        if (v.type == gguf::ValueType::String) CATCH_CHECK(t["value"] == v.s);
        else if (v.type == gguf::ValueType::F32 || v.type == gguf::ValueType::F64) CATCH_CHECK(t["value"].get<double>() == v.f);
        else if (v.type == gguf::ValueType::Bool) CATCH_CHECK(t["value"].get<bool>() == (v.i != 0));
        else if (v.type == gguf::ValueType::Array) {
          CATCH_CHECK(t["subType"] == static_cast<uint32_t>(v.elem));
          CATCH_REQUIRE(t["value"].size() == v.items.size());
          for (size_t k = 0; k < v.items.size(); ++k) {
            const auto& e = v.items[k];
            if (v.elem == gguf::ValueType::String) CATCH_CHECK(t["value"][k] == e.s);
            else CATCH_CHECK(t["value"][k].get<int64_t>() == (e.is_integer() && e.type <= gguf::ValueType::U64 && e.u ? int64_t(e.u) : e.i));
          }
        } else {
          CATCH_CHECK(t["value"].get<int64_t>() == (v.u ? int64_t(v.u) : v.i));
        }
      }
      CATCH_REQUIRE(theirs["tensors"].size() == ours->tensors().size());
      for (size_t k = 0; k < ours->tensors().size(); ++k) {
        const auto& t = theirs["tensors"][k];
        const auto& o = ours->tensors()[k];
        CATCH_CHECK(t["name"] == o.name);
        CATCH_CHECK(t["dtype"] == o.type);
        CATCH_CHECK(std::stoull(t["offset"].get<std::string>()) == o.offset);
        std::vector<int64_t> dims;
        for (const auto& d : t["shape"]) dims.push_back(std::stoll(d.get<std::string>()));
        CATCH_CHECK(dims == o.dims);
      }
    }
  }
}

// gemma3: its norms stored as the multiplier 1 + w, its window pattern and local rope from
// llama.cpp's keys and defaults. qwen3moe: its experts from the 3-D tensors, an expert at a time.
CATCH_TEST_CASE("an F32 GGUF of a checkpoint gives its logits bit for bit and its tokens", "[gguf]") {
  for (const char* arch : {"qwen3", "qwen2", "llama", "gemma3", "qwen3moe"}) {
    CATCH_INFO(arch);
    const std::string dir = test::model_dir(arch);
    LoadOptions lo;
    lo.device = test::device();
    for (at::ScalarType dtype : {at::kFloat, at::kDouble}) {
      lo.dtype = dtype;
      auto hf = Decoder::load(dir, lo), gg = Decoder::load(to_gguf(dir, "f32"), lo);
      CATCH_CHECK(gg->config().num_layers == hf->config().num_layers);
      CATCH_CHECK(gg->config().eos_ids == hf->config().eos_ids);
      const std::vector<int64_t> prompt{3, 17, 250, 9, 42, 42, 7, 100, 1, 0, 255, 64};
      const at::Tensor a = logits_of(*hf, prompt), b = logits_of(*gg, prompt);
      // llama: llama.cpp's converter turns the llama3 rope scaling into float32 factors
      // (rope_freqs), served as such: the rotation differs in the last bits.
      if (std::string(arch) == "llama") CATCH_CHECK(at::allclose(a, b, 1e-5, 1e-5));
      else CATCH_CHECK(at::equal(a, b));
      std::vector<SeqResult> x = plain_decode(*hf, requests(hf->config().vocab_size), 4),
                             y = plain_decode(*gg, requests(hf->config().vocab_size), 4);
      for (size_t k = 0; k < x.size(); ++k) CATCH_CHECK(x[k].tokens == y[k].tokens);
    }
  }
}

// Issue 71: llama.cpp keeps a file's norms in F32 whatever the other tensors' type; so does the
// loader, under bfloat16 too (Gemma's multiplier 1 + w has bits bfloat16 would lose).
CATCH_TEST_CASE("a GGUF file's norms stay float32 under bfloat16, the products take the dtype", "[gguf][gemma3]") {
  auto file = gguf::GgufFile::open(to_gguf(test::model_dir("gemma3"), "f32"));
  const ModelConfig c = gguf::config_from_gguf(*file);
  const gguf::GgufWeights bf(file, c, at::kBFloat16, at::kCPU), f32(file, c, at::kFloat, at::kCPU);
  int lossy = 0;
  for (const char* name : {"model.norm.weight", "model.layers.0.input_layernorm.weight", "model.layers.0.self_attn.q_norm.weight",
                           "model.layers.1.post_feedforward_layernorm.weight"}) {
    CATCH_INFO(name);
    const at::Tensor a = bf.take(name);
    CATCH_CHECK(a.scalar_type() == at::kFloat);
    CATCH_CHECK(at::equal(a, f32.take(name)));
    lossy += !at::equal(a, a.to(at::kBFloat16).to(at::kFloat));
  }
  CATCH_CHECK(lossy > 0);  // the check can tell
  CATCH_CHECK(bf.take("model.layers.0.mlp.down_proj.weight").scalar_type() == at::kBFloat16);
}

CATCH_TEST_CASE("F16, BF16 and Q8_0 GGUFs load into the served dtype", "[gguf]") {
  for (const char* type : {"f16", "bf16", "q8_0"}) {
    for (const char* arch : {"qwen3", "qwen3moe"}) {  // qwen3moe: its 3-D expert tensors in each type
      CATCH_INFO(type << ", " << arch);
      const std::string path = to_gguf(test::model_dir(arch), type);
      for (at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kChar}) {
        auto m = test::load_as(path, dtype);
        CATCH_CHECK(m->dtype() == (dtype == at::kChar ? at::kFloat : dtype));
        CATCH_CHECK(m->int8_weights() == (dtype == at::kChar));
        const at::Tensor l = logits_of(*m, {1, 2, 3, 4});
        CATCH_CHECK(l.isfinite().all().item<bool>());
      }
    }
  }
}

CATCH_TEST_CASE("a Q8_0 GGUF is served as its blocks under int8 and as q * d under float32", "[gguf]") {
  // q8_0_as_f32 holds each Q8_0 block's values q * d as F32. Our quantiser gives gguf-py's blocks
  // back from those (every block of theirs has a quant of +-127, so d = max / 127 to the bit), so
  // the int8 model of either file must be the same bits: a block packed out of place, a scale
  // misread, a permuted row not undone would show.
  for (const char* arch : {"llama", "qwen3"}) {
    CATCH_INFO(arch);
    const std::string dir = test::model_dir(arch);
    const std::vector<int64_t> prompt{5, 6, 7, 200, 13, 13, 99};
    for (at::ScalarType dtype : {at::kChar, at::kFloat}) {
      auto q = test::load_as(to_gguf(dir, "q8_0"), dtype), f = test::load_as(to_gguf(dir, "q8_0_as_f32"), dtype);
      CATCH_CHECK(at::equal(logits_of(*q, prompt), logits_of(*f, prompt)));
    }
  }
}

CATCH_TEST_CASE("a GGUF file of another architecture or type is refused naming it", "[gguf]") {
  const std::string path = to_gguf(test::model_dir("qwen3"), "f32");
  std::string bytes = run("cat " + path);
  auto patch = [&](const std::string& from, const std::string& to) {
    std::string b = bytes;
    const size_t at = b.find(from);
    CATCH_REQUIRE(at != std::string::npos);
    b.replace(at, from.size(), to);
    const std::string out = test::scratch_dir() + "/patched.gguf";
    FILE* f = fopen(out.c_str(), "wb");
    fwrite(b.data(), 1, b.size(), f);
    fclose(f);
    return out;
  };
  // "qwen3" -> "gemma" (same length) names an architecture not served.
  CATCH_CHECK_THROWS_WITH(Decoder::load(patch(std::string("\x05\0\0\0\0\0\0\0qwen3", 13), std::string("\x05\0\0\0\0\0\0\0gemma", 13))),
                          Catch::Contains("architecture \"gemma\" is not served"));
  // blk.0.attn_q.weight's type (after its name, dimension count and two dimensions) F32 -> I32,
  // of the same size: the reader takes it, the loader refuses it naming tensor and type.
  const std::string name = "blk.0.attn_q.weight";
  const size_t type_at = bytes.find(name) + name.size() + 4 + 16;
  CATCH_REQUIRE(bytes.substr(type_at, 4) == std::string(4, '\0'));
  CATCH_CHECK_THROWS_WITH(Decoder::load(patch(bytes.substr(type_at - 24 - name.size(), 24 + name.size() + 4),
                                              bytes.substr(type_at - 24 - name.size(), 24 + name.size()) + std::string("\x1a\0\0\0", 4))),
                          Catch::Contains("tensor \"blk.0.attn_q.weight\" has type I32, not served"));
}

CATCH_TEST_CASE("Q4_K, Q6_K and Q4_K_M GGUFs: their blocks on the K-quant kernel under int8, their values elsewhere", "[gguf][kquant]") {
  // Q4_K_M as llama-quantize chooses: Q6_K for the head and for attn_v and ffn_down in the layers
  // use_more_bits picks (of 4: layers 2 and 3), Q4_K for the rest, norms F32.
  auto file = gguf::GgufFile::open(test::kquant_gguf("q4_k_m"));
  CATCH_CHECK(file->tensor("output.weight")->type == uint32_t(gguf::TensorType::Q6_K));
  CATCH_CHECK(file->tensor("token_embd.weight")->type == uint32_t(gguf::TensorType::Q4_K));
  for (int i = 0; i < 4; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const auto more = uint32_t(i >= 2 ? gguf::TensorType::Q6_K : gguf::TensorType::Q4_K);
    CATCH_CHECK(file->tensor(p + "attn_v.weight")->type == more);
    CATCH_CHECK(file->tensor(p + "ffn_down.weight")->type == more);
    CATCH_CHECK(file->tensor(p + "attn_q.weight")->type == uint32_t(gguf::TensorType::Q4_K));
    CATCH_CHECK(file->tensor(p + "attn_norm.weight")->type == uint32_t(gguf::TensorType::F32));
  }
  const std::vector<int64_t> prompt{5, 6, 7, 200, 13, 13, 99};
  for (const char* type : {"q4_k", "q6_k", "q4_k_m"}) {
    CATCH_INFO(type);
    auto q = test::load_as(test::kquant_gguf(type), at::kChar);
    auto f = test::load_as(test::kquant_gguf(type), at::kDouble);  // the dequantised values, in float64
    CATCH_CHECK(q->int8_weights());
    CATCH_CHECK(!f->int8_weights());
    // The kernel multiplies the same weights by activations quantised to 8 bits a block of 32:
    // its logits stay near the float64 product of the dequantised weights (here within 2 % of
    // their range; a misread scale, nibble or row shows as a change of the order of the logits).
    const at::Tensor lq = logits_of(*q, prompt).to(at::kDouble), lf = logits_of(*f, prompt);
    const double range = (lf.max() - lf.min()).item<double>(), diff = (lq - lf).abs().max().item<double>();
    CATCH_INFO("max |int8 - float64| " << diff << " of a range of " << range);
    CATCH_CHECK(diff < 0.02 * range);
  }
}

// Issue 70: Q4_0, Q5_0 and IQ4_NL keep their 18- or 22-byte blocks on the packed 4-bit kernel,
// whose products are the Q8_0 kernel's on their exact conversion: the same logits, bit for bit,
// at one row (a decoding step) and at several (a prompt), as the path they took before (the
// embedding's rows among them: the file's token_embd is 4-bit too). q4_0_mix's fused groups
// mix Q4_0 with IQ4_NL (q, k, v) and with Q8_0 (gate, up): those groups go as Q8_0 blocks.
CATCH_TEST_CASE("GGUF Q4_0, Q5_0 and IQ4_NL under int8: the packed 4-bit kernel gives their Q8_0 conversion's logits, bit for bit",
                "[gguf][ggml_types][int8][isa]") {
  for (const char* type : {"q4_0", "q5_0", "iq4_nl", "q4_0_mix"}) {
    CATCH_INFO(type);
    auto packed = test::load_as(test::kquant_gguf(type), at::kChar);
    auto converted = load_converted(test::kquant_gguf(type));
    // 18 (22) bytes a block where the file's blocks stay as they are, not 34 (in the mix, o and down).
    const double kept = std::string(type) == "q4_0_mix" ? 1.0 : std::string(type) == "q5_0" ? 0.7 : 0.6;
    CATCH_CHECK(static_cast<double>(packed->product_bytes()) < kept * static_cast<double>(converted->product_bytes()));
    for (const std::vector<int64_t>& prompt : {std::vector<int64_t>{5, 6, 7, 200, 13, 13, 99}, std::vector<int64_t>{42}}) {
      const at::Tensor a = logits_of(*packed, prompt), b = logits_of(*converted, prompt);
      CATCH_CHECK(at::equal(a, b));
    }
  }
}

// Tagged rows of each type of the packed 4-bit kernel as the loader hands them on: Linear takes
// them to the kernel, and columns() (a screened draft head's) gives multiply's bits; rows of two
// types in one weight are refused.
CATCH_TEST_CASE("Linear on tagged 4-bit rows: columns give the product's bits, mixed types are refused", "[gguf][ggml_types][int8]") {
  const int64_t out = 40, in = 512;
  for (const gguf::WeightType& row : gguf::kWeightTypes) {
    if (row.int8 != gguf::Int8Path::Q4) continue;
    const gguf::TensorType type = row.id;
    CATCH_INFO(row.name);
    const int64_t width = 1 + in / row.block * row.block_bytes;
    at::Tensor w = at::randint(0, 256, {out, 1, width}, at::kByte);
    w.select(2, 0).fill_(static_cast<int64_t>(type));
    const bool min = row.id == gguf::TensorType::Q4_1 || row.id == gguf::TensorType::Q5_1;
    for (int64_t b = 0; b < in / row.block; ++b)  // d (and m) = 0.01 as float16 (0x211f), so that no scale is inf or nan
      for (int64_t at = 0; at < (min ? 4 : 2); at += 2) {
        w.select(2, 1 + at + b * row.block_bytes).fill_(0x1f);
        w.select(2, 2 + at + b * row.block_bytes).fill_(0x21);
      }
    const Linear lin(w, {}, WeightPath::Int8);
    CATCH_CHECK(lin.int8());
    CATCH_CHECK(!lin.kquant());
    CATCH_CHECK(lin.in_features() == in);
    const at::Tensor x = at::randn({3, in}), y = lin(x);
    const at::Tensor cols = at::randint(0, out, {3, 5}, at::kLong);
    CATCH_CHECK(at::equal(lin.columns(x, cols), y.gather(1, cols)));
    w[7][0][0] = static_cast<uint8_t>(type == gguf::TensorType::Q4_0 ? gguf::TensorType::IQ4_NL : gguf::TensorType::Q4_0);
    CATCH_CHECK_THROWS_WITH(Linear(w, {}, WeightPath::Int8), Catch::Contains("row 7"));
  }
}

// iq4_xs_mix: groups that mix IQ4_XS with Q4_1 (q, k, v) and with Q8_0 (gate, up), types with no
// blocks in common, served from their values; the rest of the file on the packed 4-bit kernel.
CATCH_TEST_CASE("GGUF files of every other served type: their values under float64, near them under int8", "[gguf][ggml_types]") {
  const std::vector<int64_t> prompt{5, 6, 7, 200, 13, 13, 99};
  for (const char* type : {"q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "mxfp4", "q2_k", "q3_k", "q5_k", "iq4_xs", "iq4_xs_mix"}) {
    CATCH_INFO(type);
    auto q = test::load_as(test::kquant_gguf(type), at::kChar);
    auto f = test::load_as(test::kquant_gguf(type), at::kDouble);  // the dequantised values, in float64
    CATCH_CHECK(q->int8_weights());
    CATCH_CHECK(!f->int8_weights());
    // Q2_K's, Q3_K's and Q5_K's blocks go to the K-quant kernel; Q4_0's, Q4_1's, Q5_0's,
    // Q5_1's, IQ4_NL's and IQ4_XS's to the packed 4-bit kernel; MXFP4's values to Q8_0 blocks.
    const std::string t = type;
    CATCH_CHECK(q->kquant_weights() == (t == "q2_k" || t == "q3_k" || t == "q5_k"));
    const at::Tensor lq = logits_of(*q, prompt).to(at::kDouble), lf = logits_of(*f, prompt);
    const double range = (lf.max() - lf.min()).item<double>(), diff = (lq - lf).abs().max().item<double>();
    CATCH_INFO("max |int8 - float64| " << diff << " of a range of " << range);
    CATCH_CHECK(diff < 0.02 * range);
  }
}
