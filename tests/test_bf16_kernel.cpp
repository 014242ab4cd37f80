// The bfloat16 kernel (model/kernels/bf16_kernel.h), torch-free: the AVX-512 BF16 and AVX2 paths give the
// plain path's bits (so the plain path states the instruction's arithmetic); a row's output is the same
// bits alone and at any place in any batch and over any split of the columns; the product is
// within bfloat16's rounding of the float64 product.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <xmmintrin.h>

#include "model/kernels/bf16_kernel.h"
#include "model/gguf/half_float.h"
#include "tests/random_values.h"

using namespace exspec;

namespace {

std::vector<uint16_t> random_bf16(size_t n, uint32_t seed, float scale = 1.0f) {
  std::vector<uint16_t> v(n);
  const auto f = test::random_values(n, seed, scale);
  for (size_t i = 0; i < n; ++i) v[i] = float_bf16(f[i]);
  return v;
}

std::vector<uint16_t> product(const bf16::Weight& w, const std::vector<uint16_t>& x, int64_t m, bf16::Isa isa,
                              int64_t split = -1) {
  std::vector<uint16_t> y(static_cast<size_t>(m * w.out), 0xffff);
  if (split < 0) {
    bf16::multiply(w, x.data(), m, w.in, y.data(), w.out, 0, w.tiles, isa);
  } else {
    bf16::multiply(w, x.data(), m, w.in, y.data(), w.out, split, w.tiles, isa);
    bf16::multiply(w, x.data(), m, w.in, y.data(), w.out, 0, split, isa);
  }
  return y;
}

}  // namespace

CATCH_TEST_CASE("bf16: every path this CPU has gives the plain path's bits", "[bf16]") {
  for (auto [out, in] : {std::pair<int64_t, int64_t>{48, 64}, {37, 101}, {300, 96}, {16, 2}, {5, 7}}) {
    const auto w16 = random_bf16(static_cast<size_t>(out * in), static_cast<uint32_t>(out + 3 * in));
    const bf16::Weight w = bf16::pack(w16.data(), out, in, in);
    for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}) {
      const auto x = random_bf16(static_cast<size_t>(m * in), static_cast<uint32_t>(m * 5 + out), 4.0f);
      const auto want = product(w, x, m, bf16::Isa::Plain);
      for (bf16::Isa isa : bf16::isas_here()) {
        CATCH_INFO("out " << out << ", in " << in << ", m " << m << ", " << bf16::isa_name(isa));
        CATCH_CHECK(product(w, x, m, isa) == want);
        CATCH_CHECK(product(w, x, m, isa, w.tiles / 2) == want);
      }
    }
  }
}

CATCH_TEST_CASE("bf16: a row's output is the same bits alone and at any place in any batch", "[bf16]") {
  const int64_t out = 70, in = 160;
  const auto w16 = random_bf16(static_cast<size_t>(out * in), 31);
  const bf16::Weight w = bf16::pack(w16.data(), out, in, in);
  const auto row = random_bf16(static_cast<size_t>(in), 32, 2.0f);
  for (bf16::Isa isa : bf16::isas_here()) {
    const auto alone = product(w, row, 1, isa);
    for (int64_t m = 2; m <= 17; ++m) {
      for (int64_t at : {int64_t{0}, m / 2, m - 1}) {
        auto x = random_bf16(static_cast<size_t>(m * in), static_cast<uint32_t>(200 + m), 30.0f);
        std::copy(row.begin(), row.end(), x.begin() + at * in);
        const auto y = product(w, x, m, isa, m % 3);
        CATCH_INFO(bf16::isa_name(isa) << ", m " << m << ", row at " << at);
        CATCH_CHECK(std::equal(alone.begin(), alone.end(), y.begin() + at * out));
      }
    }
  }
}

CATCH_TEST_CASE("bf16: the product is within bfloat16's rounding of the float64 product", "[bf16]") {
  const int64_t out = 64, in = 256, m = 3;
  const auto w16 = random_bf16(static_cast<size_t>(out * in), 41);
  const auto x = random_bf16(static_cast<size_t>(m * in), 42);
  const bf16::Weight w = bf16::pack(w16.data(), out, in, in);
  const auto y = product(w, x, m, bf16::best_isa());
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < out; ++c) {
      double want = 0, mag = 0;
      for (int64_t k = 0; k < in; ++k) {
        const double p = static_cast<double>(bf16_float(w16[c * in + k])) * bf16_float(x[r * in + k]);
        want += p, mag += std::fabs(p);
      }
      // One rounding to bfloat16 (2^-9 relative) and float32 accumulation over the terms.
      CATCH_CHECK(std::fabs(bf16_float(y[r * out + c]) - want) <= std::fabs(want) / 256 + mag * 1e-6);
    }
}

CATCH_TEST_CASE("bf16: rows beyond one L2 chunk are each the same bits as alone", "[bf16]") {
  const int64_t out = 40, in = 4096, m = 70;  // 32 rows of 2048 pairs fill a chunk
  const auto w16 = random_bf16(static_cast<size_t>(out * in), 61);
  const bf16::Weight w = bf16::pack(w16.data(), out, in, in);
  const auto x = random_bf16(static_cast<size_t>(m * in), 62);
  for (bf16::Isa isa : bf16::isas_here()) {
    const auto y = product(w, x, m, isa, 1);
    for (int64_t r : {int64_t{0}, int64_t{31}, int64_t{32}, m - 1}) {
      const std::vector<uint16_t> row(x.begin() + r * in, x.begin() + (r + 1) * in);
      CATCH_INFO(bf16::isa_name(isa) << ", row " << r);
      const auto alone = product(w, row, 1, isa);
      CATCH_CHECK(std::equal(alone.begin(), alone.end(), y.begin() + r * out));
    }
  }
}

// vdpbf16ps reads a subnormal as zero and writes a subnormal sum as zero: the AVX2 path gets the
// same from MXCSR's DAZ and FTZ, set for its call only. Products near float32's smallest normal,
// and subnormal inputs among them.
CATCH_TEST_CASE("bf16: subnormal inputs and sums are flushed alike on every path", "[bf16]") {
  const int64_t out = 37, in = 66;
  auto w16 = random_bf16(static_cast<size_t>(out * in), 71, 1e-19f);
  for (size_t i = 0; i < w16.size(); i += 7) w16[i] = static_cast<uint16_t>(0x0001 + i % 0x7f);  // subnormal
  const bf16::Weight w = bf16::pack(w16.data(), out, in, in);
  for (int64_t m : {1, 3, 6}) {
    auto x = random_bf16(static_cast<size_t>(m * in), static_cast<uint32_t>(72 + m), 5e-20f);
    for (size_t i = 3; i < x.size(); i += 11) x[i] = static_cast<uint16_t>(0x8000 | (0x0040 + i % 0x3f));  // -subnormal
    const auto want = product(w, x, m, bf16::Isa::Plain);
    size_t zeros = 0;
    for (uint16_t v : want) zeros += (v & 0x7fff) == 0;
    CATCH_CHECK(zeros > 0);  // some sums were flushed, so the rule was exercised
    const unsigned csr = _mm_getcsr();
    for (bf16::Isa isa : bf16::isas_here()) {
      CATCH_INFO("m " << m << ", " << bf16::isa_name(isa));
      CATCH_CHECK(product(w, x, m, isa) == want);
      CATCH_CHECK(_mm_getcsr() == csr);  // the caller's MXCSR is as it was
    }
  }
}
