// Attention by lanes (attention_lanes in model/kernels/attention_kernel.h): several queries of one kv head at once
// give each query the same bits as the one-t-at-a-time path, in float32 and bfloat16, whatever
// the blocked keys (causal, left padding, a query that sees nothing), head_dim and query count.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/kernels/attention_kernel.h"
#include "model/gguf/half_float.h"
#include "tests/random_values.h"

using namespace exspec;
using test::random_values;

namespace {

struct Case {
  int64_t B, H, Hkv, T, S, D;
  bool bf16;
};

// q, k, v, out as float32 or bfloat16 bytes; out [B, H, T, D] contiguous.
struct Data {
  std::vector<uint8_t> q, k, v;
  std::vector<char> blocked;
};

std::vector<uint8_t> as_bytes(const std::vector<float>& x, bool bf16) {
  std::vector<uint8_t> out(x.size() * (bf16 ? 2 : 4));
  for (size_t i = 0; i < x.size(); ++i) {
    if (bf16) {
      const uint16_t h = float_bf16(x[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(out.data() + 4 * i, &x[i], 4);
    }
  }
  return out;
}

Data make(const Case& c, uint32_t seed) {
  Data d;
  d.q = as_bytes(random_values(static_cast<size_t>(c.B * c.H * c.T * c.D), seed, 2.0f), c.bf16);
  d.k = as_bytes(random_values(static_cast<size_t>(c.B * c.Hkv * c.S * c.D), seed + 1, 2.0f), c.bf16);
  d.v = as_bytes(random_values(static_cast<size_t>(c.B * c.Hkv * c.S * c.D), seed + 2), c.bf16);
  // Row b: left padding of b + 1 positions, then causal over the last T; row 0's first query
  // also blocks every key (it sees nothing: zeros).
  d.blocked.assign(static_cast<size_t>(c.B * c.T * c.S), 0);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t t = 0; t < c.T; ++t)
      for (int64_t j = 0; j < c.S; ++j)
        d.blocked[(b * c.T + t) * c.S + j] = j <= b || j > c.S - c.T + t || (b == 0 && t == 0);
  return d;
}

// Items [begin, end) in steps of `step`: step 1 runs every t alone (below the lanes' minimum for
// the G used here), a whole range runs by lanes.
using AttentionFn = void (*)(const attn::Shape&, const attn::View&, const attn::View&, const attn::View&, const bool*,
                            const attn::View&, int64_t, int64_t);

std::vector<uint8_t> run(const Case& c, Data& d, int64_t step, float softcap = 0.0f, AttentionFn fn = attn::attention) {
  const int64_t e = c.bf16 ? 2 : 4;
  std::vector<uint8_t> out(static_cast<size_t>(c.B * c.H * c.T * c.D * e), 0xff);
  attn::Shape s{c.B, c.H, c.Hkv, c.T, c.S, c.D, c.bf16, 1.0f / std::sqrt(static_cast<float>(c.D)), softcap};
  attn::View qv{d.q.data(), c.H * c.T * c.D, c.T * c.D, c.D}, kv{d.k.data(), c.Hkv * c.S * c.D, c.S * c.D, c.D},
      vv{d.v.data(), c.Hkv * c.S * c.D, c.S * c.D, c.D}, ov{out.data(), c.H * c.T * c.D, c.T * c.D, c.D};
  const int64_t n = c.B * c.Hkv * c.T;
  for (int64_t i = 0; i < n; i += step)
    fn(s, qv, kv, vv, reinterpret_cast<const bool*>(d.blocked.data()), ov, i, std::min(n, i + step));
  return out;
}

}  // namespace

CATCH_TEST_CASE("attention by lanes: each query the same bits as one t at a time", "[attention]") {
  // G = 3 (the 150M's 12 heads on 4 kv heads) at T = 7 (a verify of K = 6): 16 + 5 lanes; G = 2
  // at T = 3 and 9; G = 4 at T = 2 (8 lanes); head_dim 64 and 40
  // (a tail of d past the 16-lane chunks).
  const Case cases[] = {{1, 12, 4, 7, 45, 64, false}, {2, 12, 4, 7, 45, 64, true}, {3, 4, 2, 3, 21, 64, false},
                        {2, 4, 2, 9, 33, 40, false},  {2, 8, 2, 2, 19, 40, true}, {1, 2, 1, 16, 30, 64, false}};
  uint32_t seed = 100;
  for (const Case& c : cases) {
    Data d = make(c, seed += 10);
    const std::vector<uint8_t> alone = run(c, d, 1), lanes = run(c, d, c.B * c.Hkv * c.T);
    CATCH_CHECK(std::memcmp(alone.data(), lanes.data(), alone.size()) == 0);
    // A query that sees no key gets zeros on both paths (row 0, t 0, every head).
    const int64_t e = c.bf16 ? 2 : 4;
    for (int64_t h = 0; h < c.H; ++h)
      for (int64_t x = 0; x < c.D * e; ++x) CATCH_CHECK(lanes[(h * c.T * c.D) * e + x] == 0);
  }
}

CATCH_TEST_CASE("attention by lanes: a query's bits do not depend on the queries beside it", "[attention]") {
  // The same query runs in pieces of 1..7 t's starting anywhere: every piece gives it the same bits.
  const Case c{1, 12, 4, 7, 50, 64, false};
  Data d = make(c, 7);
  const std::vector<uint8_t> want = run(c, d, 1);
  attn::Shape s{c.B, c.H, c.Hkv, c.T, c.S, c.D, false, 1.0f / 8.0f};
  for (int64_t t0 = 0; t0 < c.T; ++t0)
    for (int64_t nt = 1; t0 + nt <= c.T && nt * 3 <= 16; ++nt) {
      std::vector<float> out(want.size() / 4, -1.0f);
      attn::View qv{d.q.data(), c.H * c.T * c.D, c.T * c.D, c.D}, kv{d.k.data(), c.Hkv * c.S * c.D, c.S * c.D, c.D},
          vv{d.v.data(), c.Hkv * c.S * c.D, c.S * c.D, c.D}, ov{out.data(), c.H * c.T * c.D, c.T * c.D, c.D};
      attn::attention_lanes(s, qv, kv, vv, reinterpret_cast<const bool*>(d.blocked.data()), ov, 0, 1, t0, nt);
      for (int64_t g = 0; g < 3; ++g)
        for (int64_t t = t0; t < t0 + nt; ++t) {
          const int64_t off = ((3 + g) * c.T + t) * c.D;
          CATCH_CHECK(std::memcmp(out.data() + off, want.data() + off * 4, c.D * 4) == 0);
        }
    }
}

// Gemma 2's soft-capping (Shape::softcap): both paths cap each score alike, so a query's bits
// stay the same alone and by lanes; and the cap changes the result.
CATCH_TEST_CASE("soft-capped attention: each query the same bits alone and by lanes, and the cap bites", "[attention]") {
  const Case cases[] = {{1, 12, 4, 7, 45, 64, false}, {2, 8, 2, 2, 19, 40, true}, {2, 4, 2, 9, 33, 40, false}};
  uint32_t seed = 300;
  for (const Case& c : cases) {
    Data d = make(c, seed += 10);
    const std::vector<uint8_t> alone = run(c, d, 1, 0.5f), lanes = run(c, d, c.B * c.Hkv * c.T, 0.5f);
    CATCH_CHECK(std::memcmp(alone.data(), lanes.data(), alone.size()) == 0);
    const std::vector<uint8_t> uncapped = run(c, d, 1);
    CATCH_CHECK(std::memcmp(alone.data(), uncapped.data(), alone.size()) != 0);
  }
}

CATCH_TEST_CASE("a soft-capped score is cap * tanh(score / cap)", "[attention]") {
  CATCH_CHECK(attn::capped(3.0f, 0.0f) == 3.0f);  // no cap
  CATCH_CHECK(attn::capped(3.0f, 2.0f) == 2.0f * tanhf(1.5f));
  CATCH_CHECK(attn::capped(-1e30f, 50.0f) == -50.0f);
}

CATCH_TEST_CASE("attention: every instruction set's path gives the plain path's bits, one t at a time and by lanes",
                "[attention]") {
  // The paths this CPU runs, whatever EXSPEC_ISA says: a CI run on an AVX-512 machine proves all three.
  std::vector<AttentionFn> paths{attn::attention_plain};
  for (isa::Isa i : isa::here(isa::Family::F32)) {
    if (i == isa::Isa::Avx2) paths.push_back(attn::attention_avx2);
    if (i == isa::Isa::Avx512) paths.push_back(attn::attention_avx512);
  }
  for (const Case& c : {Case{3, 6, 2, 5, 21, 64, false}, Case{2, 8, 2, 3, 40, 80, true}, Case{4, 12, 4, 1, 70, 128, false},
                        Case{2, 4, 1, 2, 33, 20, false}}) {
    Data d = make(c, 11);
    for (float cap : {0.0f, 20.0f})
      for (int64_t step : {int64_t{1}, c.B * c.Hkv * c.T}) {
        const std::vector<uint8_t> want = run(c, d, step, cap, attn::attention_plain);
        for (size_t p = 1; p < paths.size(); ++p) {
          CATCH_INFO("D " << c.D << " bf16 " << c.bf16 << " cap " << cap << " step " << step << " path " << p);
          CATCH_CHECK(run(c, d, step, cap, paths[p]) == want);
        }
      }
  }
}
