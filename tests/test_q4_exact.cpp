// The packed 4-bit kernel (model/kernels/q4_kernel.h) on the types that have no Q8_0 form:
// IQ4_XS (a block of 32's scale d · (ls − 32) is no float16), Q4_1 and Q5_1 (a min). Torch-free.
// Every instruction-set path this CPU has gives the bits of a plain loop in the kernel's order
// over what the file's blocks stand for, stays within float32's rounding of the float64 product
// of ggml's dequantised values (gguf:*gguf-py* holds those to gguf-py's), and a row's bits are the
// same alone and in any batch, over any split of the columns; a dequantised row is ggml's values.
#include <catch2/catch.hpp>

#include <algorithm>
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

// Block b (of 32) of a row of type t as the kernel multiplies it: integers q, scale s, min m.
struct Block32 {
  int32_t q[32];
  float s, m;
};

// From the row's blocks: IQ4_XS from ggml's dequantised values alone (w = s · value, exactly, and
// no value is 0: s = w_0 / value(n_0), q = w / s); Q4_1 and Q5_1 from the file's fields (d, m,
// the nibbles and ggml's qh: bit k the 5th bit of input k), as ggml-common.h lays them out.
Block32 block_of(const WeightType& t, const uint8_t* row, const float* values, int64_t b) {
  Block32 o{};
  if (t.id == gguf::TensorType::IQ4_XS) {
    const uint8_t* nibbles = row + b / 8 * t.block_bytes + 8 + 16 * (b % 8);
    o.s = values[b * 32] / static_cast<float>(t.nibbles[nibbles[0] & 0xF]);
    for (int k = 0; k < 32; ++k) o.q[k] = o.s != 0.0f ? static_cast<int32_t>(values[b * 32 + k] / o.s) : 0;
    return o;
  }
  const uint8_t* blk = row + b * t.block_bytes;
  uint16_t d, m;
  std::memcpy(&d, blk, 2);
  std::memcpy(&m, blk + 2, 2);
  o.s = half_float(d), o.m = half_float(m);
  const bool five = t.id == gguf::TensorType::Q5_1;
  uint32_t qh = 0;
  if (five) std::memcpy(&qh, blk + 4, 4);
  const uint8_t* qs = blk + (five ? 8 : 4);
  for (int k = 0; k < 32; ++k) o.q[k] = (k < 16 ? qs[k] & 0xF : qs[k - 16] >> 4) + (five ? 16 * ((qh >> k) & 1) : 0);
  return o;
}

// The kernel's order (q4_kernel.h) over those blocks, and the float64 product of ggml's
// dequantised values with the rows' dequantised activations, with a bound on float32's roundings:
// each term's magnitude (the min's apart), one rounding a block and the sum's, plus the values'.
struct Oracle {
  std::vector<float> y;
  std::vector<double> exact, bound;
};
Oracle oracle(const WeightType& t, const std::vector<uint8_t>& blocks, const q8::Rows& x, int64_t out, int64_t in) {
  std::vector<float> w(static_cast<size_t>(out * in));
  gguf::dequantise(t, blocks.data(), out * in / t.block, w.data());
  const size_t n = static_cast<size_t>(x.m * out);
  Oracle o{std::vector<float>(n), std::vector<double>(n), std::vector<double>(n)};
  const int64_t nb = in / 32, row_bytes = in / t.block * t.block_bytes;
  for (int64_t r = 0; r < x.m; ++r)
    for (int64_t c = 0; c < out; ++c) {
      float acc = 0.0f;
      double sum = 0.0, terms = 0.0, values = 0.0;
      for (int64_t b = 0; b < nb; ++b) {
        const Block32 blk = block_of(t, blocks.data() + c * row_bytes, w.data() + c * in, b);
        const float dx = x.d[r * nb + b];
        int32_t isum = 0, xsum = 0;
        for (int64_t k = 0; k < 32; ++k) {
          const int8_t xq = x.q[(r * nb + b) * 32 + k];
          isum += blk.q[k] * xq, xsum += xq;
          sum += static_cast<double>(w[c * in + b * 32 + k]) * xq * dx;
          values += std::fabs(static_cast<double>(w[c * in + b * 32 + k]) * xq * dx);
        }
        acc = std::fma(static_cast<float>(isum), blk.s * dx, acc);
        if (has_min(t)) acc = std::fma(static_cast<float>(xsum), blk.m * dx, acc);
        terms += std::fabs(static_cast<double>(isum) * blk.s * dx) + std::fabs(static_cast<double>(xsum) * blk.m * dx);
      }
      o.y[r * out + c] = acc, o.exact[r * out + c] = sum;
      o.bound[r * out + c] = (terms * static_cast<double>(nb + 2) + values) * 0x1p-23;
    }
  return o;
}

void check_exact(const WeightType& t, int64_t out, int64_t in, const std::vector<int64_t>& row_counts) {
  const auto blocks = random_blocks(t, out, in, static_cast<uint32_t>(out * 7 + in));
  const q4::AnyWeight w = packed(t, blocks, out, in);
  for (int64_t m : row_counts) {
    const std::vector<float> x = random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(m + out), 3.0f);
    const q8::Rows rows = quantised(x, m, in);
    const Oracle o = oracle(t, blocks, rows, out, in);
    for (int64_t i = 0; i < m * out; ++i) {  // the values' product, within float32's roundings of it
      CATCH_INFO(t.name << ", m " << m << ", output " << i << ": " << o.y[i] << " against " << o.exact[i]);
      CATCH_CHECK(std::fabs(o.y[i] - o.exact[i]) <= o.bound[i]);
    }
    for (q4::Isa isa : q4::isas_here()) {
      CATCH_INFO(t.name << ": out " << out << ", in " << in << ", m " << m << ", " << q4::isa_name(isa));
      const std::vector<float> y = q4_product(w, rows, isa);
      CATCH_CHECK(same_bits(y, o.y));
      CATCH_CHECK(same_bits(q4_product(w, rows, isa, tiles(w) / 2), o.y));
      for (int64_t r = 0; r < m; r += std::max<int64_t>(1, m / 3)) {  // a row alone: its bits in the batch
        const q8::Rows alone = quantised(std::vector<float>(x.begin() + r * in, x.begin() + (r + 1) * in), 1, in);
        CATCH_CHECK(same_bits(q4_product(w, alone, isa), std::vector<float>(y.begin() + r * out, y.begin() + (r + 1) * out)));
      }
    }
  }
}

}  // namespace

CATCH_TEST_CASE("q4: the weight-type table sends IQ4_XS, Q4_1 and Q5_1 to the kernel as their own blocks, with no Q8_0 form",
                "[q4][exact]") {
  std::vector<std::string> names;
  for (const WeightType* t : q4_types(false)) {
    names.push_back(t->name);
    CATCH_CHECK(t->packed_as == t->id);
    CATCH_CHECK_NOTHROW(q4::empty_for(*t, 16, 256));
  }
  CATCH_CHECK(names == std::vector<std::string>{"Q4_1", "Q5_1", "IQ4_XS"});
  CATCH_CHECK(gguf::row(gguf::TensorType::IQ4_XS).block == q4::kBlock * q4::XsWeight::kSub);
  CATCH_CHECK(gguf::row(gguf::TensorType::IQ4_XS).block_bytes == q4::kXsBlockBytes);
  CATCH_CHECK_THROWS_AS(q4::empty_for(gguf::row(gguf::TensorType::Q8_0), 16, 256), std::invalid_argument);
}

CATCH_TEST_CASE("q4: IQ4_XS, Q4_1 and Q5_1 on every path give the bits of their blocks in the kernel's order, in any batch",
                "[q4][exact]") {
  CATCH_INFO("paths here: " << q4::isas_here().size() << ", best " << q4::isa_name(q4::best_isa()));
  const std::vector<int64_t> rows{1, 2, 3, 4, 5, 7, 8, 9, 16, 17};
  for (const WeightType* t : q4_types(false)) {
    for (auto [out, in] : {std::pair<int64_t, int64_t>{48, 256}, {37, 512}, {300, 256}, {5, 768}, {70, 1280}}) check_exact(*t, out, in, rows);
    check_exact(*t, 40, 2048, {40});  // rows beyond one L2 chunk
  }
}

CATCH_TEST_CASE("q4: a row of IQ4_XS, Q4_1 or Q5_1 dequantised is ggml's values, and part blocks are refused", "[q4][exact]") {
  for (const WeightType* t : q4_types(false)) {
    check_dequantised_rows(*t, 21, 512, 9);
    CATCH_CHECK_THROWS_AS(q4::empty_for(*t, 16, t->block + 16), std::invalid_argument);
  }
}

CATCH_TEST_CASE("q4: IQ4_XS at its bounds is exact: scales d · (ls − 32) at ls 0 and 63, values ±127 against rows at ±127",
                "[q4][exact]") {
  const WeightType& t = gguf::row(gguf::TensorType::IQ4_XS);
  const int64_t out = 16, in = 512;
  std::vector<uint8_t> blocks(static_cast<size_t>(out * in / 256 * 136));
  std::mt19937 g(3);
  for (size_t i = 0; i < blocks.size(); i += 136) {
    const uint16_t d = 0x3BFF;  // 0.99951171875: 11 significant bits
    std::memcpy(&blocks[i], &d, 2);
    const bool low = (i / 136) % 2;  // every ls 0 (−32) or 63 (+31)
    for (int k = 2; k < 8; ++k) blocks[i + k] = low ? 0x00 : 0xFF;
    for (int k = 8; k < 136; ++k) blocks[i + k] = (i / 136) % 3 == 0 ? 0x00 : static_cast<uint8_t>(g());  // nibble 0: −127
  }
  const q4::AnyWeight w = packed(t, blocks, out, in);
  std::vector<float> x(static_cast<size_t>(2 * in));
  for (int64_t i = 0; i < 2 * in; ++i) x[i] = i < in ? -1.0f : (g() % 2 ? 1.0f : -1.0f);
  const q8::Rows rows = quantised(x, 2, in);
  const Oracle o = oracle(t, blocks, rows, out, in);
  for (q4::Isa isa : q4::isas_here()) {
    CATCH_INFO(q4::isa_name(isa));
    CATCH_CHECK(same_bits(q4_product(w, rows, isa), o.y));
  }
}

CATCH_TEST_CASE("q4: Q5_1 at its bounds is exact: q 31 (5th bits set) against rows at ±127, a min of either sign", "[q4][exact]") {
  const WeightType& t = gguf::row(gguf::TensorType::Q5_1);
  const int64_t out = 32, in = 256;
  std::vector<uint8_t> blocks(static_cast<size_t>(out * in / 32 * 24));
  std::mt19937 g(5);
  for (size_t i = 0; i < blocks.size(); i += 24) {
    const int64_t row = i / 24 / (in / 32);
    const uint16_t d = 0x3C00, m = row % 2 ? 0x4C00 : 0xCC00;  // 1, and m = −16 (even rows) or +16
    std::memcpy(&blocks[i], &d, 2);
    std::memcpy(&blocks[i + 2], &m, 2);
    for (int k = 4; k < 24; ++k) blocks[i + k] = row < 2 ? 0xFF : static_cast<uint8_t>(g());  // rows 0, 1: every q 31
  }
  const q4::AnyWeight w = packed(t, blocks, out, in);
  std::vector<float> x(static_cast<size_t>(2 * in));
  for (int64_t i = 0; i < 2 * in; ++i) x[i] = i < in ? 1.0f : (g() % 2 ? 1.0f : -1.0f);
  const q8::Rows rows = quantised(x, 2, in);
  const Oracle o = oracle(t, blocks, rows, out, in);
  CATCH_CHECK(std::fabs(o.y[0] - static_cast<float>(in) * 15.0f) < 1e-2f);  // (31 − 16) a value, 256 of them, x = 1
  for (q4::Isa isa : q4::isas_here()) {
    CATCH_INFO(q4::isa_name(isa));
    CATCH_CHECK(same_bits(q4_product(w, rows, isa), o.y));
  }
}
