// The 4-bit screen kernel (model/kernels/q4_screen.h), torch-free: its quantisation against the
// format's rule, its product against the float64 product of the dequantised weights and the
// quantised activations, the vector path against the plain one bit for bit, and a row alone
// against the same row in a batch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "model/gguf/half_float.h"
#include "model/kernels/q4_screen.h"
#include "tests/random_values.h"

using namespace exspec;

namespace {

q4s::Weight screen_of(const std::vector<float>& w, int64_t out, int64_t in) {
  q4s::Weight q = q4s::empty_weight(out, in);
  q4s::quantise_rows_into(q, w.data(), in, 0, out);
  return q;
}

q8::Rows rows_of(const std::vector<float>& x, int64_t m, int64_t in) {
  q8::Rows r;
  q8::resize_rows(r, m, in);
  q8::quantise_activations(x.data(), in, 0, m, r);
  return r;
}

std::vector<float> product(const q4s::Weight& w, const q8::Rows& x, q4s::Isa isa, int64_t t0 = 0, int64_t t1 = -1) {
  std::vector<float> y(static_cast<size_t>(x.m * w.out), -1.0f);
  q4s::multiply(w, x, y.data(), w.out, t0, t1 < 0 ? w.tiles : t1, isa);
  return y;
}

}  // namespace

CATCH_TEST_CASE("q4 screen: each weight is q·d with q in [-8, 7] and d = max|w| / 7 in float16, within half a step", "[q4screen]") {
  const int64_t out = 21, in = 80;  // a part tile and a part block
  std::vector<float> w = test::random_values(out * in, 3, 0.1f);
  for (int64_t k = 0; k < 32; ++k) w[5 * in + k] = 0.0f;  // a block of zeros
  w[7 * in + 40] = 2.5f;                                   // an outlier
  const q4s::Weight q = screen_of(w, out, in);
  std::vector<float> back(static_cast<size_t>(in));
  for (int64_t r = 0; r < out; ++r) {
    q4s::dequantise_row(q, r, back.data());
    for (int64_t b = 0; b * 32 < in; ++b) {
      const int64_t n = std::min<int64_t>(32, in - b * 32);
      float amax = 0.0f;
      for (int64_t k = 0; k < n; ++k) amax = std::max(amax, std::abs(w[r * in + b * 32 + k]));
      const float d = half_float(float_half(amax / 7.0f));
      for (int64_t k = 0; k < n; ++k) {
        CATCH_INFO("row " << r << " input " << b * 32 + k);
        const float v = back[b * 32 + k];
        CATCH_CHECK(std::abs(v - w[r * in + b * 32 + k]) <= 0.5f * d * 1.0001f);
        if (d > 0) CATCH_CHECK(v / d == std::round(v / d));  // a whole multiple of d
      }
    }
  }
}

CATCH_TEST_CASE("q4 screen: the product is the float64 product of the dequantised weights and quantised rows, within float32 sums",
                "[q4screen]") {
  const int64_t out = 37, in = 200, m = 3;
  const q4s::Weight q = screen_of(test::random_values(out * in, 5, 0.05f), out, in);
  const std::vector<float> xs = test::random_values(m * in, 6);
  const q8::Rows x = rows_of(xs, m, in);
  for (q4s::Isa isa : q4s::isas_here()) {
    const std::vector<float> y = product(q, x, isa);
    std::vector<float> wrow(static_cast<size_t>(in));
    for (int64_t c = 0; c < out; ++c) {
      q4s::dequantise_row(q, c, wrow.data());
      for (int64_t r = 0; r < m; ++r) {
        double want = 0, scale = 0;
        for (int64_t k = 0; k < in; ++k) {
          const double xv = double(x.q[r * x.blocks * 32 + k]) * x.d[r * x.blocks + k / 32];
          want += double(wrow[k]) * xv;
          scale += std::abs(double(wrow[k]) * xv);
        }
        CATCH_INFO("isa " << int(isa) << " row " << r << " column " << c);
        CATCH_CHECK(std::abs(y[r * out + c] - want) <= 1e-5 * scale + 1e-30);
      }
    }
  }
}

CATCH_TEST_CASE("q4 screen: every path gives the plain path's bits, a row alone the same as in a batch", "[q4screen]") {
  for (int64_t out : {16, 45, 64}) {
    for (int64_t in : {32, 96, 770}) {
      const q4s::Weight q = screen_of(test::random_values(out * in, 9, 0.2f), out, in);
      const std::vector<float> xs = test::random_values(5 * in, 10);
      const q8::Rows all = rows_of(xs, 5, in);
      const std::vector<float> plain = product(q, all, q4s::Isa::Plain);
      for (q4s::Isa isa : q4s::isas_here()) {
        const std::vector<float> got = product(q, all, isa);
        CATCH_INFO("out " << out << " in " << in << " isa " << int(isa));
        CATCH_CHECK(std::memcmp(plain.data(), got.data(), plain.size() * sizeof(float)) == 0);
        const q8::Rows one = rows_of(std::vector<float>(xs.begin() + 3 * in, xs.begin() + 4 * in), 1, in);
        const std::vector<float> alone = product(q, one, isa);
        CATCH_CHECK(std::memcmp(alone.data(), got.data() + 3 * out, out * sizeof(float)) == 0);
        // One tile alone writes its columns and nothing else.
        const std::vector<float> tile = product(q, one, isa, q.tiles - 1, q.tiles);
        for (int64_t c = 0; c < out; ++c) CATCH_CHECK(tile[c] == (c >= (q.tiles - 1) * 16 ? alone[c] : -1.0f));
      }
    }
  }
}

CATCH_TEST_CASE("q4 screen: the largest sums (every quant 7 or -8, every input ±127) are the plain path's on every path",
                "[q4screen]") {
  const int64_t out = 32, in = 96;
  for (float sign : {1.0f, -1.0f}) {
    // +1 quantises to 7 (stored 15), -1 with a row maximum of 8/7 to -8 (stored 0).
    std::vector<float> w(static_cast<size_t>(out * in), sign > 0 ? 1.0f : -8.0f / 7.0f);
    const q4s::Weight q = screen_of(w, out, in);
    const q8::Rows x = rows_of(std::vector<float>(static_cast<size_t>(2 * in), sign), 2, in);
    const std::vector<float> plain = product(q, x, q4s::Isa::Plain);
    CATCH_CHECK(plain[0] == plain[0]);
    for (q4s::Isa isa : q4s::isas_here()) {
      CATCH_INFO("sign " << sign << " isa " << int(isa));
      const std::vector<float> got = product(q, x, isa);
      CATCH_CHECK(std::memcmp(plain.data(), got.data(), plain.size() * sizeof(float)) == 0);
    }
  }
}
