// The float32 kernel (model/kernels/f32_kernel.h), torch-free: every output is the chain of fused
// multiply-adds over the inputs in order, written out here with std::fma from the unpacked
// weight; every path this CPU has (AVX-512, AVX2, plain) gives those bits; a row's output is the
// same bits alone, at any place in any batch, over any split of the columns; and the product is
// within float32's accumulation error of the float64 product.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "model/kernels/f32_kernel.h"
#include "tests/random_values.h"

using namespace exspec;

namespace {

std::vector<float> product(const f32::Weight& w, const std::vector<float>& x, int64_t m, f32::Isa isa,
                           int64_t split = -1) {
  std::vector<float> y(static_cast<size_t>(m * w.out), std::nanf(""));
  if (split < 0) {
    f32::multiply(w, x.data(), m, w.in, y.data(), w.out, 0, w.tiles, isa);
  } else {
    f32::multiply(w, x.data(), m, w.in, y.data(), w.out, split, w.tiles, isa);
    f32::multiply(w, x.data(), m, w.in, y.data(), w.out, 0, split, isa);
  }
  return y;
}

// The rule, from the weight as given (not as packed).
std::vector<float> rule(const std::vector<float>& wt, int64_t out, int64_t in, const std::vector<float>& x, int64_t m) {
  std::vector<float> y(static_cast<size_t>(m * out));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t n = 0; n < out; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < in; ++k) acc = std::fma(x[r * in + k], wt[n * in + k], acc);
      y[r * out + n] = acc;
    }
  return y;
}

bool same_bits(const std::vector<float>& a, const float* b) { return std::memcmp(a.data(), b, a.size() * 4) == 0; }

f32::Weight packed(const std::vector<float>& wt, int64_t out, int64_t in) {
  f32::Weight w = f32::empty_weight(out, in);
  f32::pack_rows_into(w, wt.data(), in, 0, out);
  return w;
}

}  // namespace

CATCH_TEST_CASE("f32: every path this CPU has gives the rule's bits: fma over the inputs in order", "[f32]") {
  CATCH_CHECK(f32::best_isa() == isa::best(isa::Family::F32));
  for (auto [out, in] : {std::pair<int64_t, int64_t>{48, 64}, {37, 101}, {300, 96}, {16, 2}, {5, 7}, {70, 1}}) {
    const auto wt = test::random_values(static_cast<size_t>(out * in), static_cast<uint32_t>(out + 3 * in));
    const f32::Weight w = packed(wt, out, in);
    for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17}) {
      const auto x = test::random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(m * 5 + out), 4.0f);
      const auto want = rule(wt, out, in, x, m);
      for (f32::Isa isa : isa::here(isa::Family::F32)) {
        CATCH_INFO("out " << out << ", in " << in << ", m " << m << ", " << isa::name(isa, isa::Family::F32));
        CATCH_CHECK(same_bits(want, product(w, x, m, isa).data()));
        CATCH_CHECK(same_bits(want, product(w, x, m, isa, w.tiles / 2).data()));
      }
    }
  }
}

CATCH_TEST_CASE("f32: a row's output is the same bits alone and at any place in any batch", "[f32]") {
  const int64_t out = 70, in = 160;
  const auto wt = test::random_values(static_cast<size_t>(out * in), 31);
  const f32::Weight w = packed(wt, out, in);
  const auto row = test::random_values(static_cast<size_t>(in), 32, 2.0f);
  for (f32::Isa isa : isa::here(isa::Family::F32)) {
    const auto alone = product(w, row, 1, isa);
    for (int64_t m = 2; m <= 17; ++m) {
      for (int64_t at : {int64_t{0}, m / 2, m - 1}) {
        auto x = test::random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(200 + m), 30.0f);
        std::copy(row.begin(), row.end(), x.begin() + at * in);
        const auto y = product(w, x, m, isa, m % 3);
        CATCH_INFO(isa::name(isa, isa::Family::F32) << ", m " << m << ", row at " << at);
        CATCH_CHECK(same_bits(alone, y.data() + at * out));
      }
    }
  }
}

CATCH_TEST_CASE("f32: one tile of columns alone is the same bits as the whole product's", "[f32]") {
  const int64_t out = 200, in = 48, m = 5;
  const auto wt = test::random_values(static_cast<size_t>(out * in), 51);
  const auto x = test::random_values(static_cast<size_t>(m * in), 52);
  const f32::Weight w = packed(wt, out, in);
  for (f32::Isa isa : isa::here(isa::Family::F32)) {
    const auto whole = product(w, x, m, isa);
    for (int64_t t : {int64_t{0}, int64_t{5}, w.tiles - 1}) {
      std::vector<float> y(static_cast<size_t>(m * out), 0.0f);
      f32::multiply(w, x.data(), m, in, y.data(), out, t, t + 1, isa);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = t * f32::kTile; c < std::min(out, (t + 1) * f32::kTile); ++c)
          CATCH_CHECK(std::memcmp(&y[r * out + c], &whole[r * out + c], 4) == 0);
    }
  }
}

CATCH_TEST_CASE("f32: the product is within float32 accumulation of the float64 product", "[f32]") {
  const int64_t out = 64, in = 512, m = 3;
  const auto wt = test::random_values(static_cast<size_t>(out * in), 41);
  const auto x = test::random_values(static_cast<size_t>(m * in), 42);
  const auto y = product(packed(wt, out, in), x, m, f32::best_isa());
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < out; ++c) {
      double want = 0, mag = 0;
      for (int64_t k = 0; k < in; ++k) {
        const double p = static_cast<double>(wt[c * in + k]) * x[r * in + k];
        want += p, mag += std::fabs(p);
      }
      CATCH_CHECK(std::fabs(y[r * out + c] - want) <= mag * in * 6e-8);
    }
}

CATCH_TEST_CASE("f32: rows beyond one L2 chunk are each the same bits as alone, and unpacked rows are the weight's", "[f32]") {
  const int64_t out = 40, in = 4096, m = 40;  // 16 rows of 16 KiB fill a chunk
  const auto wt = test::random_values(static_cast<size_t>(out * in), 61);
  const f32::Weight w = packed(wt, out, in);
  const auto x = test::random_values(static_cast<size_t>(m * in), 62);
  for (f32::Isa isa : isa::here(isa::Family::F32)) {
    const auto y = product(w, x, m, isa, 1);
    for (int64_t r : {int64_t{0}, int64_t{15}, int64_t{16}, m - 1}) {
      const std::vector<float> row(x.begin() + r * in, x.begin() + (r + 1) * in);
      CATCH_INFO(isa::name(isa, isa::Family::F32) << ", row " << r);
      CATCH_CHECK(same_bits(product(w, row, 1, isa), y.data() + r * out));
    }
  }
  std::vector<float> back(static_cast<size_t>(in));
  for (int64_t n : {int64_t{0}, int64_t{17}, out - 1}) {
    f32::unpack_row(w, n, back.data());
    CATCH_CHECK(std::memcmp(back.data(), wt.data() + n * in, static_cast<size_t>(in) * 4) == 0);
  }
  CATCH_CHECK_THROWS_AS(f32::empty_weight(0, 4), std::invalid_argument);
}
