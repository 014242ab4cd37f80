// The weight-type table (model/gguf/ggml_types.h) against llama.cpp v0.5.0's own gguf-py
// (tests/gguf/ggml_reference.py): every row's block and bytes, and every served type's values
// over random blocks, bit for bit; and each exact conversion into another packed type's blocks
// gives back the same values.
#include <cstdlib>
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "model/gguf/ggml_types.h"

using namespace exspec::gguf;

namespace {

std::string reference_dir() {
  static const std::string dir = [] {
    std::string names;
    for (const WeightType& t : kWeightTypes)
      if (t.served() && !t.is_float()) names += std::string(" ") + t.name;
    const std::string out = EXSPEC_TEST_SCRATCH "/ggml_reference";
    const char* py = std::getenv("EXSPEC_TEST_PYTHON");  // as tests/support.h's test::python()
    const std::string cmd = std::string(py && *py ? py : "/usr/bin/python3") + " " EXSPEC_GGUF_TOOLS "/ggml_reference.py " EXSPEC_LLAMA_CPP_SRC " " + out + names + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string log;
    char buf[512];
    while (p && fgets(buf, sizeof buf, p)) log += buf;
    if (!p || pclose(p) != 0) throw std::runtime_error("failed: " + cmd + "\n" + log);
    return out;
  }();
  return dir;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The reference's random blocks of `t`, and gguf-py's values for them.
struct Reference {
  std::vector<uint8_t> blocks, values;  // values: float32, as gguf-py wrote them
  int64_t n = 0;                        // blocks
};

Reference reference(const WeightType& t) {
  Reference r{read_file(reference_dir() + "/" + t.name + ".blocks"), read_file(reference_dir() + "/" + t.name + ".values")};
  r.n = static_cast<int64_t>(r.blocks.size()) / t.block_bytes;
  CATCH_REQUIRE(static_cast<int64_t>(r.values.size()) == r.n * t.block * 4);
  return r;
}

// `blocks` (ref.n blocks of `as`) dequantised: the reference's values, bit for bit.
void check_values(const WeightType& as, const uint8_t* blocks, const Reference& ref) {
  std::vector<float> got(static_cast<size_t>(ref.n * as.block));
  dequantise(as, blocks, ref.n, got.data());
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    float w;
    std::memcpy(&w, ref.values.data() + 4 * i, 4);
    if (bits(got[i]) != bits(w) && ++bad == 1) first = static_cast<int64_t>(i);
  }
  CATCH_INFO(bad << " of " << got.size() << " values differ; the first at " << first);
  CATCH_CHECK(bad == 0);
}

}  // namespace

CATCH_TEST_CASE("every row's id, block and bytes are ggml's (gguf-py v0.5.0's GGML_QUANT_SIZES)", "[ggml_types]") {
  std::ifstream sizes(reference_dir() + "/sizes");
  std::map<std::string, std::vector<int64_t>> ref;
  std::string name;
  int64_t id, block, bytes;
  while (sizes >> name >> id >> block >> bytes) ref[name] = {id, block, bytes};
  CATCH_REQUIRE(ref.size() > 30);
  for (const WeightType& t : kWeightTypes) {
    CATCH_INFO(t.name);
    CATCH_REQUIRE(ref.count(t.name));
    CATCH_CHECK(ref[t.name] == std::vector<int64_t>{static_cast<int64_t>(t.id), t.block, t.block_bytes});
    CATCH_CHECK(weight_type(static_cast<uint32_t>(t.id)) == &t);
  }
  CATCH_CHECK(weight_type(77) == nullptr);
  CATCH_CHECK(type_name(77) == "type 77");
}

CATCH_TEST_CASE("every served type's values are gguf-py v0.5.0's, bit for bit, over random blocks", "[ggml_types]") {
  int64_t types = 0;
  for (const WeightType& t : kWeightTypes) {
    if (!t.served() || t.is_float()) continue;
    CATCH_INFO(t.name);
    const Reference ref = reference(t);
    check_values(t, ref.blocks.data(), ref);
    ++types;
  }
  CATCH_CHECK(types == 13);
}

CATCH_TEST_CASE("an exact conversion into another packed type's blocks stands for the same values", "[ggml_types]") {
  int64_t converted = 0;
  for (const WeightType& t : kWeightTypes) {
    if (!t.convert) continue;
    CATCH_INFO(t.name << " -> " << row(t.packed_as).name);
    const WeightType& into = row(t.packed_as);
    CATCH_REQUIRE(into.block == t.block);
    const Reference ref = reference(t);
    const int64_t n = ref.n;
    std::vector<uint8_t> out(static_cast<size_t>(n * into.block_bytes));
    for (int64_t b = 0; b < n; ++b) t.convert(ref.blocks.data() + b * t.block_bytes, out.data() + b * into.block_bytes);
    check_values(into, out.data(), ref);
    if (into.id == TensorType::Q8_0)  // the int8 kernel takes quants in [-127, 127] only
      for (int64_t b = 0; b < n; ++b)
        for (int k = 0; k < 32; ++k) CATCH_REQUIRE(static_cast<int8_t>(out[b * 34 + 2 + k]) != -128);
    ++converted;
  }
  CATCH_CHECK(converted == 3);
  // Q3_K keeps its own blocks on the K-quant kernel, whose products are those of this
  // conversion's, bit for bit (kernel:*Q3_K*): the conversion must stand for Q3_K's values.
  const WeightType& q3 = row(TensorType::Q3_K);
  const Reference ref = reference(q3);
  std::vector<uint8_t> out(static_cast<size_t>(ref.n * row(TensorType::Q6_K).block_bytes));
  for (int64_t b = 0; b < ref.n; ++b) blocks::q3_k_to_q6_k(ref.blocks.data() + b * q3.block_bytes, out.data() + b * row(TensorType::Q6_K).block_bytes);
  check_values(row(TensorType::Q6_K), out.data(), ref);
}

CATCH_TEST_CASE("a type not served is refused by dequantise, naming it", "[ggml_types]") {
  const uint8_t block[292] = {};
  float out[256];
  CATCH_CHECK_THROWS_WITH(dequantise(row(TensorType::IQ2_XXS), block, 1, out), Catch::Contains("IQ2_XXS is not served"));
  CATCH_CHECK(served_type_names().find("Q5_K") != std::string::npos);
  CATCH_CHECK(served_type_names().find("IQ2_XXS") == std::string::npos);
}

CATCH_TEST_CASE("docs/models.md's weight-type table is the table's served rows", "[ggml_types][docs]") {
  std::ifstream f(EXSPEC_SOURCE_DIR "/docs/models.md");
  const std::string doc((std::istreambuf_iterator<char>(f)), {});
  const std::string begin = "<!-- weight types: begin -->\n", end = "  <!-- weight types: end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  CATCH_REQUIRE(b != std::string::npos);
  CATCH_REQUIRE(e != std::string::npos);
  std::string want = "  | type | values a block | bytes a block | `--dtype int8` | other dtypes |\n  |---|---|---|---|---|\n";
  for (const WeightType& t : kWeightTypes)
    if (t.served())
      want += std::string("  | ") + t.name + " | " + std::to_string(t.block) + " | " + std::to_string(t.block_bytes) + " | " +
              int8_description(t) + " | " + (t.is_float() ? "converted to the dtype" : "its exact values, converted to the dtype") +
              " |\n";
  CATCH_CHECK(doc.substr(b + begin.size(), e - b - begin.size()) == want);
}
