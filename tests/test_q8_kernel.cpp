// The int8 kernel (model/kernels/q8_kernel.h), torch-free: every instruction-set path this CPU has gives
// the plain C++ path's bits; a row's output is the same bits alone, at any place in any batch,
// beside any other rows, and over any split of the columns (the threads); the product is within
// Q8_0's rounding of the float64 product; the float16 conversions are exact.
#include <catch2/catch.hpp>

#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/gguf/half_float.h"
#include "model/kernels/q8_kernel.h"
#include "tests/random_values.h"

using namespace exspec;
using test::random_values;

namespace {

// y [m, out] through one path, the columns split at `split` tiles (two "threads").
std::vector<float> product(const q8::Weight& w, const std::vector<float>& x, int64_t m, q8::Isa isa, int64_t split = -1) {
  q8::Rows rows;
  q8::resize_rows(rows, m, w.in);
  q8::quantise_activations(x.data(), w.in, 0, m, rows);
  std::vector<float> y(static_cast<size_t>(m * w.out), std::nanf(""));
  if (split < 0) {
    q8::multiply(w, rows, y.data(), w.out, 0, w.tiles, isa);
  } else {
    q8::multiply(w, rows, y.data(), w.out, split, w.tiles, isa);
    q8::multiply(w, rows, y.data(), w.out, 0, split, isa);
  }
  return y;
}

__attribute__((target("f16c"))) uint16_t f16c_half(float f) {
  return static_cast<uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), 0), 0));
}

bool same_bits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace

CATCH_TEST_CASE("q8: every path this CPU has gives the plain path's bits", "[q8]") {
  const auto isas = q8::isas_here();
  CATCH_INFO("paths here: " << isas.size() << ", best " << q8::isa_name(q8::best_isa()));
  for (auto [out, in] : {std::pair<int64_t, int64_t>{48, 64}, {37, 100}, {300, 96}, {16, 32}, {5, 7}}) {
    const auto wf = random_values(static_cast<size_t>(out * in), static_cast<uint32_t>(out * 7 + in));
    const q8::Weight w = q8::quantise(wf.data(), out, in, in);
    // 1..16 rows: every row-group size the kernels pick (a verify step is K + 1 rows), then
    // counts that split into several groups.
    for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 25}) {
      const auto x = random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(m + out), 3.0f);
      const auto want = product(w, x, m, q8::Isa::Plain);
      for (q8::Isa isa : isas) {
        CATCH_INFO("out " << out << ", in " << in << ", m " << m << ", " << q8::isa_name(isa));
        CATCH_CHECK(same_bits(product(w, x, m, isa).data(), want.data(), want.size()));
        CATCH_CHECK(same_bits(product(w, x, m, isa, w.tiles / 2).data(), want.data(), want.size()));
      }
    }
  }
}

CATCH_TEST_CASE("q8: a row's output is the same bits alone and at any place in any batch", "[q8]") {
  const int64_t out = 70, in = 160;
  const auto wf = random_values(static_cast<size_t>(out * in), 11);
  const q8::Weight w = q8::quantise(wf.data(), out, in, in);
  const auto row = random_values(static_cast<size_t>(in), 12, 2.0f);
  for (q8::Isa isa : q8::isas_here()) {
    const auto alone = product(w, row, 1, isa);
    for (int64_t m = 2; m <= 17; ++m) {
      for (int64_t at : {int64_t{0}, m / 2, m - 1}) {
        // Other rows of other magnitudes around it: their scales must not reach it.
        auto x = random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(100 + m), 50.0f);
        std::copy(row.begin(), row.end(), x.begin() + at * in);
        const auto y = product(w, x, m, isa, m % 3);
        CATCH_INFO(q8::isa_name(isa) << ", m " << m << ", row at " << at);
        CATCH_CHECK(same_bits(y.data() + at * out, alone.data(), static_cast<size_t>(out)));
      }
    }
  }
}

CATCH_TEST_CASE("q8: the product is within Q8_0's rounding of the float64 product", "[q8]") {
  const int64_t out = 64, in = 256, m = 3;
  const auto wf = random_values(static_cast<size_t>(out * in), 21);
  const auto x = random_values(static_cast<size_t>(m * in), 22);
  const q8::Weight w = q8::quantise(wf.data(), out, in, in);
  const auto y = product(w, x, m, q8::best_isa());
  double err = 0, norm = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < out; ++c) {
      double want = 0;
      for (int64_t k = 0; k < in; ++k) want += static_cast<double>(wf[c * in + k]) * x[r * in + k];
      err = std::max(err, std::fabs(y[r * out + c] - want));
      norm = std::max(norm, std::fabs(want));
    }
  // Each factor carries at most half a step of 1/127 of its block's largest value.
  CATCH_CHECK(err / norm < 0.02);
  CATCH_CHECK(err > 0);  // it did quantise
}

CATCH_TEST_CASE("q8: a dequantised row is q · d, and values on the grid come back exactly", "[q8]") {
  const int64_t out = 20, in = 40;  // a padded tile and a padded block
  std::vector<float> wf(static_cast<size_t>(out * in));
  for (int64_t n = 0; n < out; ++n)
    for (int64_t k = 0; k < in; ++k) wf[n * in + k] = static_cast<float>((n * 31 + k * 7) % 255 - 127) * 0.25f;
  const q8::Weight w = q8::quantise(wf.data(), out, in, in);
  std::vector<float> row(static_cast<size_t>(in));
  for (int64_t n = 0; n < out; ++n) {
    q8::dequantise_row(w, n, row.data());
    for (int64_t k = 0; k < in; ++k) {
      const float v = wf[n * in + k];
      // A block whose largest magnitude is 127 · 0.25 has d = 0.25 exactly: every value returns.
      float amax = 0;
      for (int64_t j = k / 32 * 32; j < std::min<int64_t>(in, k / 32 * 32 + 32); ++j) amax = std::max(amax, std::fabs(wf[n * in + j]));
      if (amax == 127 * 0.25f) CATCH_CHECK(row[k] == v);
      // Half a step, plus d's own rounding to float16 (11 bits) carried by up to 127 steps.
      CATCH_CHECK(std::fabs(row[k] - v) <= amax / 127 * 0.5f + amax / 1024);
    }
  }
}

CATCH_TEST_CASE("half_float: float16 conversions match the instructions, bfloat16 rounds to nearest even", "[q8]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    CATCH_CHECK(float_half(f) == h);
  }
  if (__builtin_cpu_supports("f16c")) {
    std::mt19937 g(5);
    std::uniform_int_distribution<uint32_t> bits;
    for (int i = 0; i < 200000; ++i) {
      const float f = bits_float(bits(g));
      if (std::isnan(f)) continue;
      const uint16_t want = f16c_half(f);
      if (float_half(f) != want) CATCH_FAIL("float_half(" << f << ") = " << float_half(f) << ", F16C gives " << want);
    }
  }
  CATCH_CHECK(float_bf16(1.0f) == 0x3f80);
  CATCH_CHECK(float_bf16(bits_float(0x3f808000u)) == 0x3f80);  // a tie: to even
  CATCH_CHECK(float_bf16(bits_float(0x3f818000u)) == 0x3f82);  // a tie: to even, up
  CATCH_CHECK(float_bf16(bits_float(0x3f808001u)) == 0x3f81);
  CATCH_CHECK(bf16_float(0x3f80) == 1.0f);
}

CATCH_TEST_CASE("q8: rows beyond one L2 chunk are each the same bits as alone", "[q8]") {
  const int64_t out = 40, in = 4096, m = 70;  // 64 rows of 4096 bytes fill a chunk
  const auto wf = random_values(static_cast<size_t>(out * in), 51);
  const q8::Weight w = q8::quantise(wf.data(), out, in, in);
  const auto x = random_values(static_cast<size_t>(m * in), 52);
  for (q8::Isa isa : q8::isas_here()) {
    const auto y = product(w, x, m, isa, 1);
    for (int64_t r : {int64_t{0}, int64_t{63}, int64_t{64}, m - 1}) {
      const std::vector<float> row(x.begin() + r * in, x.begin() + (r + 1) * in);
      CATCH_INFO(q8::isa_name(isa) << ", row " << r);
      CATCH_CHECK(same_bits(product(w, row, 1, isa).data(), y.data() + r * out, static_cast<size_t>(out)));
    }
  }
}

CATCH_TEST_CASE("q8: GGUF Q8_0 blocks are packed as they are", "[q8]") {
  // 37 rows (a partial tile) of 3 blocks: random float16 scales and quants in [-127, 127], as a
  // Q8_0 tensor stores them (d, then 32 int8 a block).
  const int64_t out = 37, in = 96, blocks = in / 32;
  std::mt19937 rng(5);
  std::vector<uint8_t> file(static_cast<size_t>(out * blocks * q8::kQ8_0BlockBytes));
  std::vector<float> values(static_cast<size_t>(out * in));
  for (int64_t r = 0; r < out; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      uint8_t* blk = file.data() + (r * blocks + b) * q8::kQ8_0BlockBytes;
      const uint16_t d = float_half(std::ldexp(1.0f + float(rng() % 1000) / 1000, -int(rng() % 8) - 4));
      std::memcpy(blk, &d, 2);
      for (int k = 0; k < 32; ++k) {
        const int8_t q = static_cast<int8_t>(int(rng() % 255) - 127);
        blk[2 + k] = static_cast<uint8_t>(q);
        values[r * in + b * 32 + k] = float(q) * half_float(d);
      }
    }
  q8::Weight w = q8::empty_weight(out, in);
  CATCH_REQUIRE(q8::pack_q8_0_rows_into(w, file.data(), 0, out));
  std::vector<float> row(in);
  for (int64_t r = 0; r < out; ++r) {
    q8::dequantise_row(w, r, row.data());
    CATCH_CHECK(std::memcmp(row.data(), values.data() + r * in, in * sizeof(float)) == 0);
  }
  // Packed in two halves (rows [0, 16) and [16, 37)), the same bytes.
  q8::Weight halves = q8::empty_weight(out, in);
  CATCH_REQUIRE(q8::pack_q8_0_rows_into(halves, file.data(), 0, 16));
  CATCH_REQUIRE(q8::pack_q8_0_rows_into(halves, file.data() + 16 * blocks * q8::kQ8_0BlockBytes, 16, out));
  CATCH_CHECK(std::memcmp(w.data.data(), halves.data.data(), w.data.bytes()) == 0);
  // Every path multiplies the packed blocks as the plain one does.
  const std::vector<float> x = random_values(3 * in, 9);
  const std::vector<float> want = product(w, x, 3, q8::Isa::Plain);
  for (q8::Isa isa : q8::isas_here()) CATCH_CHECK(product(w, x, 3, isa) == want);
  // A quant of -128 is outside what the kernels take: refused.
  file[2 + 5] = 0x80;
  CATCH_CHECK(!q8::pack_q8_0_rows_into(halves, file.data(), 0, 1));
}

CATCH_TEST_CASE("q8: activation rows quantised as documented, whole blocks and a part block, on every path", "[q8]") {
  // d = max|x| / 127 per block of 32, q = x · (1 / d) rounded to nearest even, corr = -128 Σ q:
  // written out here in scalars, against the kernel's vectors (whole blocks) and its scalar tail.
  for (int64_t in : {32, 96, 100, 768, 2048 + 7}) {
    const int64_t m = 3;
    auto x = random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(in), 3.0f);
    for (int64_t k = 0; k < 32 && k < in; ++k) x[static_cast<size_t>(in + k)] = 0.0f;  // row 1's first block: d 0
    for (int64_t k = 32; k < 64 && k < in; ++k) x[static_cast<size_t>(k)] = (k % 5 - 2) * 63.5f;  // ties at d 1
    for (isa::Isa path : isa::here(isa::Family::F32)) {
    CATCH_INFO("in " << in << " path " << int(path));
    q8::Rows rows;
    q8::resize_rows(rows, m, in);
    q8::quantise_activations(x.data(), in, 0, m, rows, path);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t b = 0; b < rows.blocks; ++b) {
        float top = 0.0f;
        for (int64_t k = b * 32; k < std::min(in, b * 32 + 32); ++k) top = std::max(top, std::fabs(x[r * in + k]));
        const float d = top / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        int32_t sum = 0;
        for (int64_t k = 0; k < 32; ++k) {
          const float v = b * 32 + k < in ? x[r * in + b * 32 + k] : 0.0f;
          const int32_t want = static_cast<int32_t>(std::nearbyint(v * id));
          CATCH_CHECK(rows.q[r * rows.blocks * 32 + b * 32 + k] == want);
          sum += want;
        }
        CATCH_CHECK(rows.d[r * rows.blocks + b] == d);
        CATCH_CHECK(rows.corr[r * rows.blocks + b] == -128 * sum);
      }
    }
  }
}
