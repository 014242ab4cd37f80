// GGUF reader: files built byte by byte here, well-formed and lying in each field the format has.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "model/gguf/gguf_file.h"

using namespace exspec::gguf;

namespace {

// Appends little-endian fields; a test builds a file from them and breaks one field at a time.
struct Bytes {
  std::string b;
  template <class T>
  Bytes& put(T v) {
    b.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Bytes& str(const std::string& s) {
    put<uint64_t>(s.size());
    b += s;
    return *this;
  }
  void pad(uint64_t a) {
    while (b.size() % a) b.push_back('\0');
  }
};

struct Tensor {
  std::string name;
  std::vector<uint64_t> dims;
  uint32_t type;
  uint64_t offset;
};

// A v3 file: three metadata entries of assorted types, two F32 tensors and one Q8_0 tensor.
std::string good_file(uint32_t version = 3, uint32_t alignment = 32, const std::string& second = "output_norm.weight") {
  Bytes h;
  h.put<uint32_t>(0x46554747).put<uint32_t>(version).put<uint64_t>(3).put<uint64_t>(4);
  h.str("general.architecture").put<uint32_t>(8).str("llama");
  h.str("general.alignment").put<uint32_t>(4).put<uint32_t>(alignment);
  h.str("llama.block_count").put<uint32_t>(4).put<uint32_t>(2);
  h.str("tokenizer.ggml.tokens").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(3).str("a").str("b").str("<s>");
  std::vector<Tensor> ts{{"token_embd.weight", {4, 3}, 0, 0},
                         {second, {4}, 0, 64},
                         {"blk.0.attn_q.weight", {32, 2}, 8, 128}};
  for (const auto& t : ts) {
    h.str(t.name).put<uint32_t>(t.dims.size());
    for (auto d : t.dims) h.put<uint64_t>(d);
    h.put<uint32_t>(t.type).put<uint64_t>(t.offset);
  }
  h.pad(alignment);
  const size_t data = h.b.size();
  h.b.resize(data + 128 + 2 * 34, '\0');
  for (int k = 0; k < 12; ++k) {
    float v = float(k);
    std::memcpy(&h.b[data + 4 * k], &v, 4);
  }
  return h.b;
}

std::string error_of(const std::string& bytes) {
  try {
    GgufFile::parse("t.gguf", bytes);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// Offset of the first occurrence of `needle` (a field's neighbour) in the bytes.
size_t at(const std::string& b, const std::string& needle) {
  size_t p = b.find(needle);
  CATCH_REQUIRE(p != std::string::npos);
  return p;
}

template <class T>
void poke(std::string& b, size_t pos, T v) {
  std::memcpy(&b[pos], &v, sizeof v);
}

}  // namespace

CATCH_TEST_CASE("a well-formed file reads back every field", "[gguf]") {
  for (uint32_t version : {2u, 3u}) {
    auto f = GgufFile::parse("t.gguf", good_file(version));
    CATCH_CHECK(f->version() == version);
    CATCH_CHECK(f->alignment() == 32);
    CATCH_CHECK(f->get_string("general.architecture") == "llama");
    CATCH_CHECK(f->get_int("llama.block_count") == 2);
    CATCH_CHECK(f->get_strings("tokenizer.ggml.tokens") == std::vector<std::string>{"a", "b", "<s>"});
    CATCH_REQUIRE(f->tensors().size() == 3);
    const TensorInfo* e = f->tensor("token_embd.weight");
    CATCH_REQUIRE(e);
    CATCH_CHECK(e->shape() == std::vector<int64_t>{3, 4});
    CATCH_CHECK(e->bytes == 48);
    float v;
    std::memcpy(&v, e->data + 4 * 5, 4);
    CATCH_CHECK(v == 5.0f);
    CATCH_CHECK(f->tensor("blk.0.attn_q.weight")->bytes == 68);
    CATCH_CHECK(type_name(f->tensor("blk.0.attn_q.weight")->type) == "Q8_0");
    CATCH_CHECK(f->data_offset() % 32 == 0);
  }
}

CATCH_TEST_CASE("the same bytes read from a file through the mapping", "[gguf]") {
  const std::string path = "gguf_reader_test.gguf";
  std::ofstream(path, std::ios::binary) << good_file();
  auto f = GgufFile::open(path);
  CATCH_CHECK(f->file_size() == good_file().size());
  CATCH_CHECK(f->tensor("output_norm.weight")->bytes == 16);
  std::remove(path.c_str());
  CATCH_CHECK_THROWS_WITH(GgufFile::open("no/such.gguf"), Catch::Contains("no/such.gguf: cannot open"));
}

CATCH_TEST_CASE("typed getters name the key and the type found", "[gguf]") {
  auto f = GgufFile::parse("t.gguf", good_file());
  CATCH_CHECK_THROWS_WITH(f->get_int("general.architecture"), Catch::Contains("\"general.architecture\" is string"));
  CATCH_CHECK_THROWS_WITH(f->get_string("llama.context_length"), Catch::Contains("no metadata key \"llama.context_length\""));
  CATCH_CHECK_THROWS_WITH(f->get_ints("tokenizer.ggml.tokens"), Catch::Contains("an array of integers expected"));
  CATCH_CHECK(!f->int_or("llama.context_length"));
  CATCH_CHECK(f->get_float("llama.block_count") == 2.0);
}

CATCH_TEST_CASE("every truncation of a file is refused, never read past", "[gguf]") {
  const std::string b = good_file();
  // Every prefix up to the end of the last tensor's data: each must fail with a message.
  const size_t last_data = b.size();
  for (size_t n = 0; n < last_data; ++n) {
    const std::string e = error_of(b.substr(0, n));
    CATCH_CHECK(e.rfind("t.gguf: ", 0) == 0);
    if (e.empty()) CATCH_FAIL_CHECK("prefix of " << n << " bytes read without error");
  }
}

CATCH_TEST_CASE("a corrupt header is refused naming what is wrong", "[gguf]") {
  const std::string good = good_file();
  auto broken = [&](auto&& edit) {
    std::string b = good;
    edit(b);
    return error_of(b);
  };
  CATCH_CHECK_THAT(broken([](std::string& b) { b[0] = 'X'; }), Catch::Contains("not a GGUF file"));
  CATCH_CHECK_THAT(broken([](std::string& b) { poke<uint32_t>(b, 4, 1); }), Catch::Contains("version 1 is not supported"));
  CATCH_CHECK_THAT(broken([](std::string& b) { poke<uint64_t>(b, 8, uint64_t(1) << 60); }),
                   Catch::Contains("tensor count"));
  CATCH_CHECK_THAT(broken([](std::string& b) { poke<uint64_t>(b, 16, 99999); }), Catch::Contains("metadata count"));
  // The architecture string's length made huge, then just one too long.
  const size_t arch_len = at(good, "general.architecture") + 20 + 4;
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint64_t>(b, arch_len, uint64_t(1) << 40); }),
                   Catch::Contains("claims"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint32_t>(b, arch_len - 4, 13); }),
                   Catch::Contains("unknown value type 13"));
  // The token array's item type and count.
  const size_t arr = at(good, "tokenizer.ggml.tokens") + 21 + 4;
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint32_t>(b, arr, 77); }), Catch::Contains("unknown array item type 77"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint64_t>(b, arr + 4, uint64_t(1) << 61); }),
                   Catch::Contains("does not fit in the file"));
  // Alignment: zero, not a power of two, and of another type.
  const size_t al = at(good, "general.alignment") + 17;
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint32_t>(b, al + 4, 0); }), Catch::Contains("not a power of 2"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint32_t>(b, al + 4, 48); }), Catch::Contains("not a power of 2"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint32_t>(b, al, 5); }), Catch::Contains("u32 expected"));
  // A key twice (both names are 17 bytes long).
  CATCH_CHECK_THAT(broken([&](std::string& b) { std::memcpy(&b[at(good, "llama.block_count")], "general.alignment", 17); }),
                   Catch::Contains("metadata key \"general.alignment\" appears twice"));
}

CATCH_TEST_CASE("a lying tensor table is refused naming the tensor", "[gguf]") {
  const std::string good = good_file();
  auto broken = [&](auto&& edit) {
    std::string b = good;
    edit(b);
    return error_of(b);
  };
  const size_t q = at(good, "blk.0.attn_q.weight") + 19;  // n_dims, then dims[2], type, offset
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint32_t>(b, q, 5); }),
                   Catch::Contains("\"blk.0.attn_q.weight\" has 5 dimensions"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint32_t>(b, q, 0); }), Catch::Contains("has 0 dimensions"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint64_t>(b, q + 4, 0); }), Catch::Contains("dimension 0"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint64_t>(b, q + 4, 33); }),
                   Catch::Contains("not a multiple of its block of 32"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint64_t>(b, q + 12, uint64_t(1) << 39); }),
                   Catch::Contains("runs past the end of the file"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint32_t>(b, q + 20, 4); }), Catch::Contains("unknown ggml type 4"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint64_t>(b, q + 24, 100); }),
                   Catch::Contains("not a multiple of the alignment 32"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint64_t>(b, q + 24, 64); }), Catch::Contains("overlap"));
  CATCH_CHECK_THAT(broken([&](std::string& b) { poke<uint64_t>(b, q + 24, uint64_t(-32)); }),
                   Catch::Contains("runs past the end"));
  // The same name twice.
  CATCH_CHECK_THAT(error_of(good_file(3, 32, "token_embd.weight")), Catch::Contains("\"token_embd.weight\" appears twice"));
}

CATCH_TEST_CASE("random corruption never crashes the reader", "[gguf]") {
  const std::string good = good_file();
  uint64_t s = 12345;
  int refused = 0;
  for (int n = 0; n < 4000; ++n) {
    std::string b = good;
    for (int k = 0; k < 1 + n % 4; ++k) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      b[(s >> 33) % b.size()] = char(s >> 17);
    }
    refused += !error_of(b).empty();
  }
  CATCH_CHECK(refused > 0);  // some flips land in tensor data, which the reader does not judge
}
