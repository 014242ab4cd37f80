#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/checkpoint.h"
#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/io_util.h"
#include "model/safetensors.h"
#include "tests/support.h"

namespace fs = std::filesystem;
using namespace exspec;

namespace {

std::string load_error(const std::string& dir) {
  try {
    Decoder::load(dir, {at::kFloat, at::kCPU});
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string copy_model(const std::string& src, const std::string& name) {
  const std::string dst = test::scratch_dir() + "/" + name;
  test::remove_tree(dst);
  fs::copy(src, dst, fs::copy_options::recursive);
  return dst;
}

}  // namespace

CATCH_TEST_CASE("safetensors round trip for every float dtype", "[safetensors]") {
  const std::string path = test::scratch_dir() + "/rt.safetensors";
  at::Tensor base = at::randn({3, 5}, at::kDouble);
  std::vector<std::pair<std::string, at::Tensor>> ts{{"a.f64", base},
                                                     {"b.f32", base.to(at::kFloat)},
                                                     {"c.f16", base.to(at::kHalf)},
                                                     {"d.bf16", base.to(at::kBFloat16)},
                                                     {"e.i64", at::arange(7, at::kLong)}};
  write_safetensors(path, ts);
  auto f = SafetensorsFile::open(path);
  CATCH_REQUIRE(f->entries().size() == 5);
  for (const auto& [name, t] : ts) {
    at::Tensor back = f->tensor(name);
    CATCH_CHECK(back.scalar_type() == t.scalar_type());
    CATCH_CHECK(back.sizes() == t.sizes());
    CATCH_CHECK(at::equal(back, t));
  }
  CATCH_CHECK(f->entries().at("c.f16").dtype == "F16");
  CATCH_CHECK(f->entries().at("d.bf16").dtype == "BF16");
}

CATCH_TEST_CASE("checkpoints stored in f16/bf16/f64 and sharded load to the same model", "[safetensors]") {
  MakeModelOptions o;
  o.arch = "llama";
  const auto ref = Decoder::load(test::model_dir(o), {at::kDouble, at::kCPU});
  at::Tensor ids = at::tensor(std::vector<int64_t>{3, 1, 4, 1, 5}, at::kLong).view({1, 5});
  at::Tensor pos = at::arange(5, at::kLong).view({1, 5});
  at::Tensor mask = at::ones({1, 5}, at::kLong);
  KVCache c0 = new_dense_cache(*ref, 1);
  at::Tensor want = dense_forward(*ref, ids, pos, mask, c0);

  o.shards = 3;
  auto sharded = Decoder::load(test::model_dir(o), {at::kDouble, at::kCPU});
  KVCache c1 = new_dense_cache(*sharded, 1);
  CATCH_CHECK(at::equal(dense_forward(*sharded, ids, pos, mask, c1), want));
  CATCH_CHECK(fs::exists(test::model_dir(o) + "/model.safetensors.index.json"));

  o.shards = 1;
  for (const char* dt : {"float64", "float16", "bfloat16"}) {
    o.dtype = dt;
    auto m = Decoder::load(test::model_dir(o), {at::kDouble, at::kCPU});
    KVCache c = new_dense_cache(*m, 1);
    at::Tensor got = dense_forward(*m, ids, pos, mask, c);
    const double tol = std::string(dt) == "float64" ? 1e-6 : 0.05;  // weights rounded to 16 bits
    CATCH_CHECK((got - want).abs().max().item<double>() < tol);
  }
}

CATCH_TEST_CASE("a truncated safetensors file is a clear error", "[safetensors][errors]") {
  const std::string dir = copy_model(test::model_dir("llama"), "truncated");
  const std::string f = dir + "/model.safetensors";
  fs::resize_file(f, fs::file_size(f) - 100);
  const std::string err = load_error(dir);
  CATCH_CHECK_THAT(err, Catch::Contains("model.safetensors"));
  CATCH_CHECK_THAT(err, Catch::Contains("out of bounds") && Catch::Contains("truncated"));

  fs::resize_file(f, 4);
  CATCH_CHECK_THAT(load_error(dir), Catch::Contains("8-byte header length is missing"));
}

CATCH_TEST_CASE("a corrupt header is a clear error", "[safetensors][errors]") {
  const std::string dir = copy_model(test::model_dir("llama"), "corrupt");
  const std::string f = dir + "/model.safetensors";
  {
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(8);
    io.write("}}}}", 4);  // the JSON header no longer parses
  }
  CATCH_CHECK_THAT(load_error(dir), Catch::Contains("not JSON"));
  {
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    const char huge[8] = {'\xff', '\xff', '\xff', '\xff', '\xff', '\xff', 0, 0};
    io.write(huge, 8);
  }
  CATCH_CHECK_THAT(load_error(dir), Catch::Contains("exceeds the file size"));
}

CATCH_TEST_CASE("a shape that does not match config.json names the tensor", "[safetensors][errors]") {
  const std::string dir = copy_model(test::model_dir("llama"), "badshape");
  std::string cfg = read_text_file(dir + "/config.json");
  cfg.replace(cfg.find("\"intermediate_size\": 128"), 24, "\"intermediate_size\": 96");
  write_text_file(dir + "/config.json", cfg);
  const std::string err = load_error(dir);
  CATCH_CHECK_THAT(err, Catch::Contains("model.layers.0.mlp.gate_proj.weight"));
  CATCH_CHECK_THAT(err, Catch::Contains("[128, 64]") && Catch::Contains("[96, 64]"));
}

CATCH_TEST_CASE("missing files and unknown architectures are clear errors", "[safetensors][errors]") {
  const std::string dir = copy_model(test::model_dir("llama"), "nofiles");
  fs::remove(dir + "/model.safetensors");
  CATCH_CHECK_THAT(load_error(dir), Catch::Contains("no model.safetensors or model.safetensors.index.json"));
  fs::remove(dir + "/config.json");
  CATCH_CHECK_THAT(load_error(dir), Catch::Contains("config.json: cannot open"));

  const std::string d2 = copy_model(test::model_dir("llama"), "unknownarch");
  std::string cfg = read_text_file(d2 + "/config.json");
  cfg.replace(cfg.find("LlamaForCausalLM"), 16, "MambaForCausalLM");
  write_text_file(d2 + "/config.json", cfg);
  CATCH_CHECK_THAT(load_error(d2), Catch::Contains("unknown architecture \"MambaForCausalLM\""));

  // A tensor listed in config but absent from the file.
  const std::string d3 = copy_model(test::model_dir("llama"), "fewerlayers");
  std::string c3 = read_text_file(d3 + "/config.json");
  c3.replace(c3.find("\"num_hidden_layers\": 4"), 22, "\"num_hidden_layers\": 5");
  write_text_file(d3 + "/config.json", c3);
  CATCH_CHECK_THAT(load_error(d3), Catch::Contains("no tensor \"model.layers.4.input_layernorm.weight\""));
}

CATCH_TEST_CASE("read() copies what tensor() maps", "[safetensors]") {
  const std::string path = test::scratch_dir() + "/read.safetensors";
  std::vector<std::pair<std::string, at::Tensor>> ts{{"a", at::randn({7, 3}, at::kFloat)},
                                                     {"b", at::randn({5}, at::kDouble).to(at::kBFloat16)}};
  write_safetensors(path, ts);
  auto f = SafetensorsFile::open(path);
  for (const auto& [name, t] : ts) {
    at::Tensor copy = f->read(name);
    CATCH_CHECK(copy.scalar_type() == t.scalar_type());
    CATCH_CHECK(at::equal(copy, f->tensor(name)));
  }
}

// Issue 51: a bfloat16 checkpoint served in bfloat16 held 1.6x its weight bytes. The embedding and
// the norms were views of the file's mapping, which kept the whole mapping, and every page of it
// that packing had read, resident beside the packed copies.
CATCH_TEST_CASE("a loaded model keeps nothing of its files and holds each weight once", "[safetensors][memory]") {
  for (const char* arch : {"llama", "qwen3"}) {  // qwen3: tied embeddings and per-head norms
    const std::string dir = test::model_dir(arch);  // float32 on disk
    for (at::ScalarType dt : {at::kFloat, at::kBFloat16, at::kDouble}) {
      for (bool pack : {false, true}) {
        CATCH_CAPTURE(arch, c10::toString(dt), pack);
        const int64_t open_before = SafetensorsFile::open_count();
        auto m = Decoder::load(dir, {dt, at::kCPU, pack});
        CATCH_CHECK(SafetensorsFile::open_count() == open_before);  // the same dtype aliased the file
        const int64_t plain = m->num_parameters() * static_cast<int64_t>(c10::elementSize(dt));
        const ModelConfig& c = m->config();
        // qk norms are held per head ([H + Hkv, D]); num_parameters() counts them as stored ([D] twice).
        const int64_t per_head = c.qk_norm ? c.num_layers * (c.num_heads + c.num_kv_heads - 2) * c.head_dim *
                                                 static_cast<int64_t>(c10::elementSize(dt))
                                           : 0;
        // Packed: plus the layout's padding (2 % at these shapes), less than one more embedding: a
        // tied head's packed copy is the embedding's only one.
        const int64_t embedding = c.vocab_size * c.hidden_size * static_cast<int64_t>(c10::elementSize(dt));
        // What every token's products read: the layers' q/k/v, o, gate/up, down and the head.
        const int64_t products = (c.num_layers * (c.hidden_size * (c.num_heads + 2 * c.num_kv_heads) * c.head_dim +
                                                  c.num_heads * c.head_dim * c.hidden_size +
                                                  3 * c.hidden_size * c.intermediate_size) +
                                  c.vocab_size * c.hidden_size) *
                                 static_cast<int64_t>(c10::elementSize(dt));
        if (!m->packed_weights()) {
          CATCH_CHECK(m->weight_bytes() == plain + per_head);
          CATCH_CHECK(m->product_bytes() == products);
        } else {
          CATCH_CHECK(m->weight_bytes() >= plain + per_head);
          CATCH_CHECK(m->weight_bytes() < plain + per_head + embedding);
          CATCH_CHECK(m->product_bytes() >= products);
          CATCH_CHECK(m->product_bytes() < products + products / 20);  // the layout's padding
        }
      }
    }
  }
}
