// The packed 4-bit kernel (model/kernels/q4_kernel.h), torch-free: for every type the weight-type
// table sends to it with an exact Q8_0 form (Q4_0, Q5_0, IQ4_NL), every instruction-set path this
// CPU has gives the Q8_0 kernel's bits on the type's exact conversion into Q8_0 blocks (the path
// it replaced), at 1..16 rows and more, over any split of the columns; a dequantised row is the
// type's values. The types without one (IQ4_XS, Q4_1, Q5_1): test_q4_exact.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tests/q4_kernel_support.h"
#include "tests/random_values.h"

using namespace exspec;
using namespace exspec::test;
using gguf::WeightType;

namespace {

// The path the kernel replaces: the blocks converted exactly (the row's `convert`) into Q8_0's.
q8::Weight q8_weight(const WeightType& t, const std::vector<uint8_t>& blocks, int64_t out, int64_t in) {
  const int64_t n = out * in / t.block;
  std::vector<uint8_t> q8_0(static_cast<size_t>(n * q8::kQ8_0BlockBytes));
  for (int64_t b = 0; b < n; ++b) t.convert(blocks.data() + b * t.block_bytes, q8_0.data() + b * q8::kQ8_0BlockBytes);
  q8::Weight w = q8::empty_weight(out, in);
  CATCH_REQUIRE(q8::pack_q8_0_rows_into(w, q8_0.data(), 0, out));
  return w;
}

// Every path's q4 product against the Q8_0 kernel's on the conversion, same path and plain.
void check_against_q8(const WeightType& t, int64_t out, int64_t in, const std::vector<int64_t>& row_counts) {
  const auto blocks = random_blocks(t, out, in, static_cast<uint32_t>(out * 13 + in));
  const q4::AnyWeight w4 = packed(t, blocks, out, in);
  const q8::Weight w8 = q8_weight(t, blocks, out, in);
  for (int64_t m : row_counts) {
    const q8::Rows rows = quantised(random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(m + out), 3.0f), m, in);
    auto q8_path = [](q8::Isa isa) { return [isa](auto&&... a) { q8::multiply(a..., isa); }; };
    const auto want = product(w8, rows, q8_path(q8::Isa::Plain));
    for (q4::Isa isa : q4::isas_here()) {
      CATCH_INFO(t.name << ": out " << out << ", in " << in << ", m " << m << ", " << q4::isa_name(isa));
      CATCH_CHECK(same_bits(product(w8, rows, q8_path(isa)), want));  // the Q8_0 kernel's paths agree
      CATCH_CHECK(same_bits(q4_product(w4, rows, isa), want));
      CATCH_CHECK(same_bits(q4_product(w4, rows, isa, tiles(w4) / 2), want));
    }
  }
}

}  // namespace

CATCH_TEST_CASE("q4: the weight-type table sends Q4_0, Q5_0 and IQ4_NL to the kernel, with their exact conversions", "[q4]") {
  std::vector<std::string> names;
  for (const WeightType* t : q4_types(true)) {
    names.push_back(t->name);
    CATCH_CHECK(t->nibbles != nullptr);
    CATCH_CHECK(t->packed_as == gguf::TensorType::Q8_0);
    CATCH_CHECK(t->block == q4::kBlock);
    CATCH_CHECK_NOTHROW(q4::empty_for(*t, 16, 64));
  }
  CATCH_CHECK(names == std::vector<std::string>{"Q4_0", "Q5_0", "IQ4_NL"});
}

CATCH_TEST_CASE("q4: every path this CPU has gives the Q8_0 kernel's bits on the converted blocks", "[q4]") {
  CATCH_INFO("paths here: " << q4::isas_here().size() << ", best " << q4::isa_name(q4::best_isa()));
  // 1..16 rows (a verify step is K + 1) and counts that split into several row groups; `in` not
  // a multiple of 256, `out` not of 16 (a padded tile) nor of 64 (a part group of tiles).
  const std::vector<int64_t> rows{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 25};
  for (const WeightType* t : q4_types(true))
    for (auto [out, in] : {std::pair<int64_t, int64_t>{48, 64}, {37, 288}, {300, 96}, {16, 32}, {5, 160}, {70, 800}})
      check_against_q8(*t, out, in, rows);
}

CATCH_TEST_CASE("q4: rows beyond one L2 chunk give the Q8_0 kernel's bits", "[q4]") {
  // 2048 inputs: a chunk is 32 rows (panel_loop.h chunk_rows), so 40 rows take two.
  for (const WeightType* t : q4_types(true)) check_against_q8(*t, 40, 2048, {40});
}

CATCH_TEST_CASE("q4: a dequantised row is the type's values, bit for bit", "[q4]") {
  for (const WeightType* t : q4_types(true)) check_dequantised_rows(*t, 21, 96, 7);
}

CATCH_TEST_CASE("q4: a weight of part blocks or a value of -128 is refused", "[q4]") {
  int8_t values[16] = {};
  CATCH_CHECK_THROWS_AS(q4::empty_weight(16, 40, values), std::invalid_argument);
  CATCH_CHECK_NOTHROW(q4::empty_weight(16, 64, values));
  values[3] = -128;
  CATCH_CHECK_THROWS_AS(q4::empty_weight(16, 64, values), std::invalid_argument);
}

CATCH_TEST_CASE("q4: sums at their bounds are exact: values of ±16 and ±32 (int16 sums on AVX2 over 4 and 2 vectors) and ±127 against rows at ±127", "[q4]") {
  const int64_t out = 32, in = 256, m = 3;
  for (int8_t top : {int8_t{16}, int8_t{32}, int8_t{127}}) {
    int8_t values[16];
    for (int i = 0; i < 16; ++i) values[i] = static_cast<int8_t>(i % 2 ? -top : top);
    // Every nibble even (value +top) in one row, odd (−top) in another, mixed in the rest; d = 1.
    std::mt19937 g(top);
    std::vector<uint8_t> blocks(static_cast<size_t>(out * in / 32 * 18)), q8_0(static_cast<size_t>(out * in / 32 * 34));
    for (int64_t n = 0; n < out * in / 32; ++n) {
      uint8_t* b = &blocks[n * 18];
      b[0] = 0x00, b[1] = 0x3C;
      const int64_t row = n / (in / 32);
      for (int k = 0; k < 16; ++k) b[2 + k] = row == 0 ? 0x00 : row == 1 ? 0x11 : static_cast<uint8_t>(g());
      q8_0[n * 34] = 0x00, q8_0[n * 34 + 1] = 0x3C;
      for (int j = 0; j < 32; ++j) q8_0[n * 34 + 2 + j] = static_cast<uint8_t>(values[j < 16 ? b[2 + j] & 0xF : b[2 + j - 16] >> 4]);
    }
    q4::Weight w4 = q4::empty_weight(out, in, values);
    q4::pack_rows_into(w4, blocks.data(), 0, out);
    q8::Weight w8 = q8::empty_weight(out, in);
    CATCH_REQUIRE(q8::pack_q8_0_rows_into(w8, q8_0.data(), 0, out));
    // Rows of one magnitude: every activation quant ±127, all +, all −, or mixed.
    std::vector<float> x(static_cast<size_t>(m * in));
    for (int64_t i = 0; i < m * in; ++i) x[i] = i < in ? 1.0f : i < 2 * in ? -1.0f : (g() % 2 ? 1.0f : -1.0f);
    const q8::Rows rows = quantised(x, m, in);
    const auto want = product(w8, rows, [](auto&&... a) { q8::multiply(a..., q8::Isa::Plain); });
    // Row 0 by column 0: the largest sums there are (top · 127 a product), times d = 1 and dx = 1/127.
    CATCH_CHECK(std::fabs(want[0] - static_cast<float>(top) * in) <= 1e-5f * top * in);
    for (q4::Isa isa : q4::isas_here()) {
      CATCH_INFO("±" << int(top) << ", " << q4::isa_name(isa));
      CATCH_CHECK(same_bits(product(w4, rows, [isa](auto&&... a) { q4::multiply(a..., isa); }), want));
    }
  }
}

