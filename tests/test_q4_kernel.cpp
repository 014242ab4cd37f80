// The packed 4-bit kernel (model/kernels/q4_kernel.h), torch-free: for every type the weight-type
// table sends to it with an exact Q8_0 form (Q4_0, IQ4_NL), every instruction-set path this CPU
// has gives the Q8_0 kernel's bits on the type's exact conversion into Q8_0 blocks (the path it
// replaces), at 1..16 rows and more, over any split of the columns; a dequantised row is the
// type's values. IQ4_XS, which has no Q8_0 form: every path gives the bits of a plain loop over
// the file's dequantised values (ggml's, gguf:*gguf-py*), stays within float32's rounding of
// their float64 product, and a row's bits are the same alone and in any batch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/gguf/ggml_types.h"
#include "model/gguf/half_float.h"
#include "model/kernels/q4_kernel.h"
#include "model/kernels/q8_kernel.h"
#include "tests/random_values.h"

using namespace exspec;
using gguf::WeightType;
using test::random_values;

namespace {

// The kernel's types that have an exact Q8_0 form (IQ4_XS, which has none: below).
std::vector<const WeightType*> q4_types() {
  std::vector<const WeightType*> out;
  for (const WeightType& t : gguf::kWeightTypes)
    if (t.int8 == gguf::Int8Path::Q4 && t.convert) out.push_back(&t);
  return out;
}

// `out` rows of `in / 32` random blocks of type t: random nibbles, float16 scales of either sign
// (Q4_0's d is max / −8) and of magnitudes a file's have.
std::vector<uint8_t> random_blocks(const WeightType& t, int64_t out, int64_t in, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> scale(0.0f, 0.01f);
  std::vector<uint8_t> b(static_cast<size_t>(out * in / t.block * t.block_bytes));
  for (size_t i = 0; i < b.size(); i += static_cast<size_t>(t.block_bytes)) {
    const uint16_t d = float_half(scale(g));
    std::memcpy(&b[i], &d, 2);
    for (int64_t k = 2; k < t.block_bytes; ++k) b[i + k] = static_cast<uint8_t>(g());
  }
  return b;
}

q4::Weight q4_weight(const WeightType& t, const std::vector<uint8_t>& blocks, int64_t out, int64_t in) {
  q4::Weight w = q4::empty_weight(out, in, t.nibbles);
  q4::pack_rows_into(w, blocks.data(), 0, out);
  return w;
}

// The path the kernel replaces: the blocks converted exactly (the row's `convert`) into Q8_0's.
q8::Weight q8_weight(const WeightType& t, const std::vector<uint8_t>& blocks, int64_t out, int64_t in) {
  const int64_t n = out * in / t.block;
  std::vector<uint8_t> q8_0(static_cast<size_t>(n * q8::kQ8_0BlockBytes));
  for (int64_t b = 0; b < n; ++b) t.convert(blocks.data() + b * t.block_bytes, q8_0.data() + b * q8::kQ8_0BlockBytes);
  q8::Weight w = q8::empty_weight(out, in);
  CATCH_REQUIRE(q8::pack_q8_0_rows_into(w, q8_0.data(), 0, out));
  return w;
}

q8::Rows quantised(const std::vector<float>& x, int64_t m, int64_t in) {
  q8::Rows rows;
  q8::resize_rows(rows, m, in);
  q8::quantise_activations(x.data(), in, 0, m, rows);
  return rows;
}

// y [m, out] of either kernel through one path, the columns split at `split` tiles (two "threads").
template <class W, class Multiply>
std::vector<float> product(const W& w, const q8::Rows& rows, const Multiply& multiply, int64_t split = -1) {
  std::vector<float> y(static_cast<size_t>(rows.m * w.out), std::nanf(""));
  if (split < 0) {
    multiply(w, rows, y.data(), w.out, 0, w.tiles);
  } else {
    multiply(w, rows, y.data(), w.out, split, w.tiles);
    multiply(w, rows, y.data(), w.out, 0, split);
  }
  return y;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Every path's q4 product against the Q8_0 kernel's on the conversion, same path and plain.
void check_against_q8(const WeightType& t, int64_t out, int64_t in, const std::vector<int64_t>& row_counts) {
  const auto blocks = random_blocks(t, out, in, static_cast<uint32_t>(out * 13 + in));
  const q4::Weight w4 = q4_weight(t, blocks, out, in);
  const q8::Weight w8 = q8_weight(t, blocks, out, in);
  for (int64_t m : row_counts) {
    const q8::Rows rows = quantised(random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(m + out), 3.0f), m, in);
    auto q8_path = [](q8::Isa isa) { return [isa](auto&&... a) { q8::multiply(a..., isa); }; };
    const auto want = product(w8, rows, q8_path(q8::Isa::Plain));
    for (q4::Isa isa : q4::isas_here()) {
      CATCH_INFO(t.name << ": out " << out << ", in " << in << ", m " << m << ", " << q4::isa_name(isa));
      auto q4_path = [isa](auto&&... a) { q4::multiply(a..., isa); };
      CATCH_CHECK(same_bits(product(w8, rows, q8_path(isa)), want));  // the Q8_0 kernel's paths agree
      CATCH_CHECK(same_bits(product(w4, rows, q4_path), want));
      CATCH_CHECK(same_bits(product(w4, rows, q4_path, w4.tiles / 2), want));
    }
  }
}

}  // namespace

CATCH_TEST_CASE("q4: the weight-type table sends Q4_0 and IQ4_NL to the kernel, with their exact conversions", "[q4]") {
  std::vector<std::string> names;
  for (const WeightType* t : q4_types()) {
    names.push_back(t->name);
    CATCH_CHECK(t->nibbles != nullptr);
    CATCH_CHECK(t->convert != nullptr);
    CATCH_CHECK(t->packed_as == gguf::TensorType::Q8_0);
    CATCH_CHECK(t->block == q4::kBlock);
    CATCH_CHECK(t->block_bytes == q4::kBlockBytes);
  }
  CATCH_CHECK(names == std::vector<std::string>{"Q4_0", "IQ4_NL"});
}

CATCH_TEST_CASE("q4: every path this CPU has gives the Q8_0 kernel's bits on the converted blocks", "[q4]") {
  CATCH_INFO("paths here: " << q4::isas_here().size() << ", best " << q4::isa_name(q4::best_isa()));
  // 1..16 rows (a verify step is K + 1) and counts that split into several row groups; `in` not
  // a multiple of 256, `out` not of 16 (a padded tile) nor of 64 (a part group of tiles).
  const std::vector<int64_t> rows{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 25};
  for (const WeightType* t : q4_types())
    for (auto [out, in] : {std::pair<int64_t, int64_t>{48, 64}, {37, 288}, {300, 96}, {16, 32}, {5, 160}, {70, 800}})
      check_against_q8(*t, out, in, rows);
}

CATCH_TEST_CASE("q4: rows beyond one L2 chunk give the Q8_0 kernel's bits", "[q4]") {
  // 2048 inputs: a chunk is 32 rows (panel_loop.h chunk_rows), so 40 rows take two.
  for (const WeightType* t : q4_types()) check_against_q8(*t, 40, 2048, {40});
}

CATCH_TEST_CASE("q4: a dequantised row is the type's values, bit for bit", "[q4]") {
  const int64_t out = 21, in = 96;
  for (const WeightType* t : q4_types()) {
    CATCH_INFO(t->name);
    const auto blocks = random_blocks(*t, out, in, 7);
    const q4::Weight w = q4_weight(*t, blocks, out, in);
    std::vector<float> got(static_cast<size_t>(in)), want(static_cast<size_t>(in));
    for (int64_t n = 0; n < out; ++n) {
      q4::dequantise_row(w, n, got.data());
      gguf::dequantise(*t, blocks.data() + n * in / t->block * t->block_bytes, in / t->block, want.data());
      CATCH_CHECK(same_bits(got, want));
    }
  }
}

CATCH_TEST_CASE("q4: a weight of part blocks or a value of -128 is refused", "[q4]") {
  int8_t values[16] = {};
  CATCH_CHECK_THROWS_AS(q4::empty_weight(16, 40, values), std::invalid_argument);
  CATCH_CHECK_NOTHROW(q4::empty_weight(16, 64, values));
  values[3] = -128;
  CATCH_CHECK_THROWS_AS(q4::empty_weight(16, 64, values), std::invalid_argument);
}

CATCH_TEST_CASE("q4: sums at their bounds are exact: values of ±16 (int16 sums on AVX2) and ±127 against rows at ±127", "[q4]") {
  const int64_t out = 32, in = 256, m = 3;
  for (int8_t top : {int8_t{16}, int8_t{127}}) {
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

// ---- IQ4_XS: super-blocks of 256, a block of 32's scale d · (ls − 32), no Q8_0 form ----

namespace {

const WeightType& iq4_xs() { return gguf::row(gguf::TensorType::IQ4_XS); }

q4::XsWeight xs_weight(const std::vector<uint8_t>& blocks, int64_t out, int64_t in) {
  q4::XsWeight w = q4::empty_xs_weight(out, in, iq4_xs().nibbles);
  q4::pack_rows_into(w, blocks.data(), 0, out);
  return w;
}

// The kernel's order (q4_kernel.h) computed from the file's dequantised values alone (ggml's):
// a block of 32's scale is s = w_0 / value(n_0) (exact: w = s · value, and no value is 0), its
// integers w / s, its sum exact; y = fma(float(Σ), s · dx, y) block by block. And the float64
// product of the same values with the rows' dequantised activations, with the sum of the terms'
// magnitudes for a bound on float32's rounding.
struct XsOracle {
  std::vector<float> y;
  std::vector<double> exact, magnitude;
};
XsOracle xs_oracle(const std::vector<uint8_t>& blocks, const q8::Rows& x, int64_t out, int64_t in) {
  const WeightType& t = iq4_xs();
  std::vector<float> w(static_cast<size_t>(out * in));
  gguf::dequantise(t, blocks.data(), out * in / t.block, w.data());
  XsOracle o{std::vector<float>(static_cast<size_t>(x.m * out)), std::vector<double>(static_cast<size_t>(x.m * out)),
             std::vector<double>(static_cast<size_t>(x.m * out))};
  for (int64_t r = 0; r < x.m; ++r)
    for (int64_t n = 0; n < out; ++n) {
      float acc = 0.0f;
      double sum = 0.0, mag = 0.0;
      for (int64_t b = 0; b < in / 32; ++b) {
        const uint8_t* nibbles = blocks.data() + (n * in + b * 32) / t.block * t.block_bytes + 8 + 16 * (b % 8);
        const float* wb = w.data() + n * in + b * 32;
        const float s = wb[0] / static_cast<float>(t.nibbles[nibbles[0] & 0xF]);
        int32_t isum = 0;
        for (int64_t k = 0; k < 32; ++k) {
          const int8_t xq = x.q[(r * x.blocks + b) * 32 + k];
          if (s != 0.0f) isum += static_cast<int32_t>(wb[k] / s) * xq;
          sum += static_cast<double>(wb[k]) * (static_cast<double>(xq) * x.d[r * x.blocks + b]);
          mag += std::fabs(static_cast<double>(wb[k]) * (static_cast<double>(xq) * x.d[r * x.blocks + b]));
        }
        acc = std::fma(static_cast<float>(isum), s * x.d[r * x.blocks + b], acc);
      }
      o.y[r * out + n] = acc, o.exact[r * out + n] = sum, o.magnitude[r * out + n] = mag;
    }
  return o;
}

void check_xs(int64_t out, int64_t in, const std::vector<int64_t>& row_counts) {
  const auto blocks = random_blocks(iq4_xs(), out, in, static_cast<uint32_t>(out * 7 + in));
  const q4::XsWeight w = xs_weight(blocks, out, in);
  for (int64_t m : row_counts) {
    const std::vector<float> x = random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(m + out), 3.0f);
    const q8::Rows rows = quantised(x, m, in);
    const XsOracle o = xs_oracle(blocks, rows, out, in);
    for (int64_t i = 0; i < m * out; ++i) {  // the values' product, within float32's roundings of it
      CATCH_INFO("m " << m << ", output " << i << ": " << o.y[i] << " against " << o.exact[i]);
      CATCH_CHECK(std::fabs(o.y[i] - o.exact[i]) <= o.magnitude[i] * static_cast<double>(in / 32 + 2) * 0x1p-23);
    }
    for (q4::Isa isa : q4::isas_here()) {
      CATCH_INFO("out " << out << ", in " << in << ", m " << m << ", " << q4::isa_name(isa));
      auto path = [isa](auto&&... a) { q4::multiply(a..., isa); };
      const std::vector<float> y = product(w, rows, path);
      CATCH_CHECK(same_bits(y, o.y));
      CATCH_CHECK(same_bits(product(w, rows, path, w.tiles / 2), o.y));
      for (int64_t r = 0; r < m; r += std::max<int64_t>(1, m / 3)) {  // a row alone: its bits in the batch
        const q8::Rows alone = quantised(std::vector<float>(x.begin() + r * in, x.begin() + (r + 1) * in), 1, in);
        CATCH_CHECK(same_bits(product(w, alone, path), std::vector<float>(y.begin() + r * out, y.begin() + (r + 1) * out)));
      }
    }
  }
}

}  // namespace

CATCH_TEST_CASE("q4: the weight-type table sends IQ4_XS to the kernel as its super-blocks, with no Q8_0 form", "[q4][iq4_xs]") {
  const WeightType& t = iq4_xs();
  CATCH_CHECK(t.int8 == gguf::Int8Path::Q4);
  CATCH_CHECK(t.nibbles == gguf::blocks::kIq4nlValues);
  CATCH_CHECK(t.convert == nullptr);
  CATCH_CHECK(t.block == q4::kBlock * q4::XsWeight::kSub);
  CATCH_CHECK(t.block_bytes == q4::kXsBlockBytes);
}

CATCH_TEST_CASE("q4: IQ4_XS on every path gives the bits of its values' blocks in the kernel's order, in any batch", "[q4][iq4_xs]") {
  CATCH_INFO("paths here: " << q4::isas_here().size() << ", best " << q4::isa_name(q4::best_isa()));
  const std::vector<int64_t> rows{1, 2, 3, 4, 5, 7, 8, 9, 16, 17};
  for (auto [out, in] : {std::pair<int64_t, int64_t>{48, 256}, {37, 512}, {300, 256}, {5, 768}, {70, 1280}}) check_xs(out, in, rows);
  check_xs(40, 2048, {40});  // rows beyond one L2 chunk
}

CATCH_TEST_CASE("q4: an IQ4_XS row dequantised is ggml's values; part super-blocks are refused", "[q4][iq4_xs]") {
  const int64_t out = 21, in = 512;
  const auto blocks = random_blocks(iq4_xs(), out, in, 9);
  const q4::XsWeight w = xs_weight(blocks, out, in);
  std::vector<float> got(static_cast<size_t>(in)), want(static_cast<size_t>(in));
  for (int64_t n = 0; n < out; ++n) {
    q4::dequantise_row(w, n, got.data());
    gguf::dequantise(iq4_xs(), blocks.data() + n * in / 256 * 136, in / 256, want.data());
    CATCH_CHECK(same_bits(got, want));
  }
  CATCH_CHECK_THROWS_AS(q4::empty_xs_weight(16, 288, iq4_xs().nibbles), std::invalid_argument);
}

CATCH_TEST_CASE("q4: IQ4_XS at its bounds is exact: scales d · (ls − 32) at ls 0 and 63, values ±127 against rows at ±127",
                "[q4][iq4_xs]") {
  const int64_t out = 16, in = 512;
  std::vector<uint8_t> blocks(static_cast<size_t>(out * in / 256 * 136));
  std::mt19937 g(3);
  for (size_t i = 0; i < blocks.size(); i += 136) {
    const uint16_t d = 0x3BFF;  // 0.99951171875: 11 significant bits
    std::memcpy(&blocks[i], &d, 2);
    const bool low = (i / 136) % 2;  // every ls 0 (−32) or 63 (+31)
    blocks[i + 2] = blocks[i + 3] = blocks[i + 4] = blocks[i + 5] = blocks[i + 6] = blocks[i + 7] = low ? 0x00 : 0xFF;
    for (int k = 8; k < 136; ++k) blocks[i + k] = (i / 136) % 3 == 0 ? 0x00 : static_cast<uint8_t>(g());  // nibble 0: −127
  }
  const q4::XsWeight w = xs_weight(blocks, out, in);
  std::vector<float> x(static_cast<size_t>(2 * in));
  for (int64_t i = 0; i < 2 * in; ++i) x[i] = i < in ? -1.0f : (g() % 2 ? 1.0f : -1.0f);
  const q8::Rows rows = quantised(x, 2, in);
  const XsOracle o = xs_oracle(blocks, rows, out, in);
  for (q4::Isa isa : q4::isas_here()) {
    CATCH_INFO(q4::isa_name(isa));
    CATCH_CHECK(same_bits(product(w, rows, [isa](auto&&... a) { q4::multiply(a..., isa); }), o.y));
  }
}
