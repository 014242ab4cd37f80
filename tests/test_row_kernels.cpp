// The per-row kernels (model/kernels/row_ops.h, model/kernels/attention_kernel.h), torch-free: each within its
// dtype's rounding of a float64 reference, and attention's result for a query the same bits
// whatever the other queries, the padding before its keys, the blocked keys and the strides.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/kernels/attention_kernel.h"
#include "model/kernels/fast_exp.h"
#include "model/gguf/half_float.h"
#include "model/kernels/row_ops.h"
#include "tests/random_values.h"

using namespace exspec;
using test::random_values;

CATCH_TEST_CASE("rowops: exp within 2 ulp of the correctly rounded value", "[rowops]") {
  for (float x = -80.0f; x < 80.0f; x += 0.0137f) {
    const double want = std::exp(static_cast<double>(x));
    const float got = exp_f32(x);
    CATCH_CHECK(std::fabs(got - want) <= 2.5 * std::fabs(std::nextafter(static_cast<float>(want), INFINITY) - static_cast<float>(want)));
  }
  CATCH_CHECK(exp_f32(0.0f) == 1.0f);
  CATCH_CHECK(exp_f32(-1000.0f) < 1e-37f);  // clamped, never NaN
  CATCH_CHECK(std::isfinite(exp_f32(1000.0f)));
}

CATCH_TEST_CASE("rowops: norm, gated activation and rope against float64", "[rowops]") {
  const int64_t n = 3, H = 72, I = 40, heads = 3, D = 16;
  const auto x = random_values(static_cast<size_t>(n * H), 1, 2.0f), w = random_values(static_cast<size_t>(H), 2);
  std::vector<float> y(x.size());
  rowops::rms_norm(rowops::Type::F32, x.data(), H, w.data(), 1e-6f, y.data(), H, H, 0, n);
  for (int64_t r = 0; r < n; ++r) {
    double ss = 0;
    for (int64_t k = 0; k < H; ++k) ss += double(x[r * H + k]) * x[r * H + k];
    const double inv = 1.0 / std::sqrt(ss / H + 1e-6);
    for (int64_t k = 0; k < H; ++k) CATCH_CHECK(std::fabs(y[r * H + k] - w[k] * x[r * H + k] * inv) < 1e-5);
  }
  const auto gu = random_values(static_cast<size_t>(n * 2 * I), 3, 3.0f);
  std::vector<float> act(static_cast<size_t>(n * I));
  rowops::gated_mul(rowops::Type::F32, rowops::Gate::Silu, gu.data(), 2 * I, act.data(), I, I, 0, n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < I; ++i) {
      const double g = gu[r * 2 * I + i], u = gu[r * 2 * I + I + i];
      CATCH_CHECK(std::fabs(act[r * I + i] - g / (1 + std::exp(-g)) * u) < 1e-5 * (1 + std::fabs(g * u)));
    }
  // GELU's tanh form as Hugging Face writes it (gelu_pytorch_tanh), over gates from -9 to 9
  const auto wide = random_values(static_cast<size_t>(n * 2 * I), 6, 9.0f);
  rowops::gated_mul(rowops::Type::F32, rowops::Gate::GeluTanh, wide.data(), 2 * I, act.data(), I, I, 0, n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < I; ++i) {
      const double g = wide[r * 2 * I + i], u = wide[r * 2 * I + I + i];
      const double gelu = 0.5 * g * (1 + std::tanh(std::sqrt(2 / M_PI) * (g + 0.044715 * g * g * g)));
      CATCH_CHECK(std::fabs(act[r * I + i] - gelu * u) < 1e-5 * (1 + std::fabs(g * u)));
    }
  const auto q = random_values(static_cast<size_t>(n * heads * D), 4), ang = random_values(static_cast<size_t>(n * D / 2), 5);
  std::vector<float> c(static_cast<size_t>(n * D)), s(c.size()), out(q.size());
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < D; ++i) c[r * D + i] = std::cos(ang[r * D / 2 + i % (D / 2)]), s[r * D + i] = std::sin(ang[r * D / 2 + i % (D / 2)]);
  rowops::rope(rowops::Type::F32, q.data(), heads * D, c.data(), s.data(), D, out.data(), heads, D, 0, n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < D / 2; ++i) {
        const int64_t o = (r * heads + h) * D;
        const double a = ang[r * D / 2 + i], x1 = q[o + i], x2 = q[o + i + D / 2];
        CATCH_CHECK(std::fabs(out[o + i] - (x1 * std::cos(a) - x2 * std::sin(a))) < 1e-5);
        CATCH_CHECK(std::fabs(out[o + i + D / 2] - (x2 * std::cos(a) + x1 * std::sin(a))) < 1e-5);
      }
}

namespace {

// Attention of one batch row's queries [H, T, D] over keys/values [Hkv, S, D] stored at
// position offset `pad` of buffers S + pad long (left padding: those positions blocked).
std::vector<float> attend(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                          int64_t H, int64_t Hkv, int64_t T, int64_t S, int64_t D, int64_t pad, uint32_t junk) {
  const int64_t Sp = S + pad;
  auto kp = random_values(static_cast<size_t>(Hkv * Sp * D), junk, 100.0f), vp = random_values(kp.size(), junk + 1, 100.0f);
  for (int64_t h = 0; h < Hkv; ++h)
    for (int64_t j = 0; j < S; ++j)
      for (int64_t d = 0; d < D; ++d) {
        kp[(h * Sp + pad + j) * D + d] = k[(h * S + j) * D + d];
        vp[(h * Sp + pad + j) * D + d] = v[(h * S + j) * D + d];
      }
  // Causal over the last T positions, padding blocked.
  std::vector<char> blocked(static_cast<size_t>(T * Sp));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < Sp; ++j) blocked[t * Sp + j] = j < pad || j - pad > S - T + t;
  std::vector<float> out(static_cast<size_t>(H * T * D));
  attn::Shape s{1, H, Hkv, T, Sp, D, false, 1.0f / std::sqrt(static_cast<float>(D))};
  attn::View qv{const_cast<float*>(q.data()), H * T * D, T * D, D}, kv{kp.data(), Hkv * Sp * D, Sp * D, D},
      vv{vp.data(), Hkv * Sp * D, Sp * D, D}, ov{out.data(), H * T * D, T * D, D};
  attn::attention(s, qv, kv, vv, reinterpret_cast<const bool*>(blocked.data()), ov, 0, Hkv * T);
  return out;
}

}  // namespace

CATCH_TEST_CASE("attention kernel: a query's result ignores padding, blocked keys and other queries", "[attention]") {
  const int64_t H = 4, Hkv = 2, T = 3, S = 21, D = 64;
  const auto q = random_values(static_cast<size_t>(H * T * D), 7), k = random_values(static_cast<size_t>(Hkv * S * D), 8),
             v = random_values(static_cast<size_t>(Hkv * S * D), 9);
  const auto want = attend(q, k, v, H, Hkv, T, S, D, 0, 10);
  for (int64_t pad : {1, 5, 16, 17})
    CATCH_CHECK(std::memcmp(attend(q, k, v, H, Hkv, T, S, D, pad, 11 + pad).data(), want.data(), want.size() * 4) == 0);
  // Against float64: softmax(q k / sqrt(D)) v, causal.
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t kvh = h / (H / Hkv), last = S - T + t;
      std::vector<double> p(static_cast<size_t>(last + 1));
      double top = -1e300, sum = 0;
      for (int64_t j = 0; j <= last; ++j) {
        double sc = 0;
        for (int64_t d = 0; d < D; ++d) sc += double(q[(h * T + t) * D + d]) * k[(kvh * S + j) * D + d];
        p[j] = sc / 8.0, top = std::max(top, p[j]);
      }
      for (auto& x : p) x = std::exp(x - top), sum += x;
      for (int64_t d = 0; d < D; ++d) {
        double o = 0;
        for (int64_t j = 0; j <= last; ++j) o += p[j] / sum * v[(kvh * S + j) * D + d];
        CATCH_CHECK(std::fabs(want[(h * T + t) * D + d] - o) < 1e-5);
      }
    }
}

CATCH_TEST_CASE("rowops: argmax of each row as at::argmax gives it", "[rowops]") {
  // Rows of 32,000 and of lengths that end inside a vector; the maximum repeated (the first
  // wins), as -0 and +0, at the last element, and a NaN (the first NaN wins).
  for (int64_t V : {1, 15, 17, 100, 32000}) {
    const int64_t n = 7;
    auto x = random_values(static_cast<size_t>(n * V), static_cast<uint32_t>(V));
    auto put = [&](int64_t r, int64_t i, float v) {
      if (i < V) x[static_cast<size_t>(r * V + i)] = v;
    };
    put(1, V / 3, 50.0f), put(1, V / 2, 50.0f);
    for (int64_t i = 0; i < V; ++i) x[static_cast<size_t>(2 * V + i)] = -1.0f;
    put(2, V / 2, -0.0f), put(2, V - 1, 0.0f);
    put(3, V - 1, 60.0f);
    put(4, V / 4, std::nanf("")), put(4, V / 2, std::nanf("")), put(4, 0, 70.0f);
    for (int64_t i = 0; i < V; ++i) x[static_cast<size_t>(5 * V + i)] = -INFINITY;
    std::vector<int64_t> got(static_cast<size_t>(n), -1);
    rowops::argmax_rows(x.data(), V, V, n, got.data());
    for (int64_t r = 0; r < n; ++r) {
      int64_t want = 0;  // torch's rule, element by element: a NaN wins at once, else strictly greater
      for (int64_t i = 1; i < V && !std::isnan(x[r * V + want]); ++i)
        if (std::isnan(x[r * V + i]) || x[r * V + i] > x[r * V + want]) want = i;
      CATCH_CHECK(got[static_cast<size_t>(r)] == want);
    }
  }
}

CATCH_TEST_CASE("rowops: top_k gives the k largest from the largest down, the first of equal values, NaN last", "[rowops]") {
  std::mt19937 g(17);
  for (int64_t n : {1, 15, 16, 17, 100, 1000, 32003}) {
    std::vector<float> v(static_cast<size_t>(n));
    std::uniform_int_distribution<int> few(0, 40);  // many equal values
    for (auto& x : v) x = static_cast<float>(few(g)) * 0.25f - 5.0f;
    if (n > 20) v[3] = v[n - 2] = NAN, v[n / 2] = -INFINITY;
    // The reference: a stable sort of the indices by value, descending, NaN after everything.
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    auto key = [&](int64_t i) { return std::isnan(v[i]) ? -INFINITY : v[i]; };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return key(a) > key(b); });
    for (int64_t k : {int64_t{1}, int64_t{4}, int64_t{16}, n}) {
      if (k > n) continue;
      std::vector<int64_t> got(static_cast<size_t>(k), -1);
      rowops::top_k(v.data(), n, k, got.data());
      CATCH_INFO("n " << n << " k " << k);
      for (int64_t j = 0; j < k; ++j) {
        CATCH_INFO("place " << j);
        CATCH_CHECK(got[j] == order[j]);  // NaN ranks as -inf: the first of them first
      }
    }
  }
}
