// The K-quant kernel (Q2_K to Q6_K: model/kernels/kquant_kernel.h), torch-free. Dequantisation is checked
// against the format's published definition on super-blocks this test packs by hand (its own
// packing of 6-bit scales and mins, nibbles and high bits, written from the format, not from the
// kernel); the product against the float64 product of the dequantised weights and quantised
// activations; every path against the plain one, bit for bit; a row alone against the same row
// at any place in any batch.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/gguf/half_float.h"
#include "model/kernels/kquant_groups.h"
#include "model/kernels/kquant_kernel.h"
#include "tests/random_values.h"

using namespace exspec;

namespace {

// Q4_K's 12 bytes from sc[8], m[8] (each 0..63): bytes 0-3 hold sc[0..3] and the top two bits of
// sc[4..7]; bytes 4-7 m[0..3] and the top two bits of m[4..7]; bytes 8-11 the low nibbles of
// sc[4..7] (low) and m[4..7] (high).
std::vector<uint8_t> q4k_block(float d, float dmin, const int* sc, const int* m, const int* q) {
  std::vector<uint8_t> b(kq::kQ4_KBytes, 0);
  const uint16_t hd = float_half(d), hm = float_half(dmin);
  std::memcpy(&b[0], &hd, 2);
  std::memcpy(&b[2], &hm, 2);
  for (int j = 0; j < 4; ++j) {
    b[4 + j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    b[8 + j] = static_cast<uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
    b[12 + j] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
  // 128 bytes of nibbles: 32 bytes per 64 values, the first 32 values low, the next 32 high.
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) b[16 + 32 * p + l] = static_cast<uint8_t>(q[64 * p + l] | (q[64 * p + 32 + l] << 4));
  return b;
}

// Q6_K from q[256] (0..63), sc[16] (int8), d: per half of 128 values, ql[64] holds the low nibbles
// of values 0-31 and 64-95 (bytes 0-31, low and high) and 32-63 and 96-127 (bytes 32-63); qh[32]
// their top two bits, value l + 32 i in bits 2i.
std::vector<uint8_t> q6k_block(float d, const int* sc, const int* q) {
  std::vector<uint8_t> b(kq::kQ6_KBytes, 0);
  for (int n = 0; n < 2; ++n) {
    const int* v = q + 128 * n;
    for (int l = 0; l < 32; ++l) {
      b[64 * n + l] = static_cast<uint8_t>((v[l] & 0xF) | ((v[l + 64] & 0xF) << 4));
      b[64 * n + 32 + l] = static_cast<uint8_t>((v[l + 32] & 0xF) | ((v[l + 96] & 0xF) << 4));
      b[128 + 32 * n + l] =
          static_cast<uint8_t>((v[l] >> 4) | ((v[l + 32] >> 4) << 2) | ((v[l + 64] >> 4) << 4) | ((v[l + 96] >> 4) << 6));
    }
  }
  for (int i = 0; i < 16; ++i) b[192 + i] = static_cast<uint8_t>(static_cast<int8_t>(sc[i]));
  const uint16_t hd = float_half(d);
  std::memcpy(&b[208], &hd, 2);
  return b;
}

// Row (or run of `run` rows) k's type: Q6_K every third, Q5_K at k = 4, 19, 34, ..., Q3_K at
// k = 6, 13, 27, ..., Q2_K at k = 10, 43, ..., Q4_K elsewhere.
uint8_t type_of(int64_t k) {
  return k % 3 == 2 ? kq::kQ6_K : k % 5 == 4 ? kq::kQ5_K : k % 7 == 6 ? kq::kQ3_K : k % 11 == 10 ? kq::kQ2_K : kq::kQ4_K;
}

// A weight of random blocks, its rows' types alternating (type_of), or in runs of 8 or 16
// rows, so that whole groups of each type are interleaved (kquant_groups.h) beside rows kept
// one by one. `type` (optional) gives each row's type in place of type_of.
kq::Weight random_weight(int64_t out, int64_t in, uint32_t seed, int64_t run = 1, uint8_t (*type)(int64_t) = type_of) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.0005f, 0.004f);
  const int64_t width = kq::tagged_width(in);
  std::vector<uint8_t> tagged(static_cast<size_t>(out * width), 0);
  for (int64_t r = 0; r < out; ++r) {
    uint8_t* row = tagged.data() + r * width;
    row[0] = type(r / run);
    for (int64_t s = 0; s < in / kq::kSuper; ++s) {
      uint8_t* b = row + 1 + s * kq::block_bytes(row[0]);
      for (int64_t k = 0; k < kq::block_bytes(row[0]); ++k) b[k] = static_cast<uint8_t>(byte(rng));
      const uint16_t d = float_half(scale(rng)), dmin = float_half(scale(rng));
      std::memcpy(b + kq::d_offset(row[0]), &d, 2);
      if (kq::dmin_offset(row[0]) >= 0) std::memcpy(b + kq::dmin_offset(row[0]), &dmin, 2);
    }
  }
  return kq::from_tagged(tagged.data(), out, in);
}

std::vector<float> product(const kq::Weight& w, const std::vector<float>& x, int64_t m, kq::Isa isa, int64_t split = -1) {
  q8::Rows rows;
  q8::resize_rows(rows, m, w.in);
  q8::quantise_activations(x.data(), w.in, 0, m, rows);
  std::vector<float> y(static_cast<size_t>(m * w.out), std::nanf(""));
  if (split < 0) {
    kq::multiply(w, rows, y.data(), w.out, 0, w.out, isa);
  } else {
    kq::multiply(w, rows, y.data(), w.out, split, w.out, isa);
    kq::multiply(w, rows, y.data(), w.out, 0, split, isa);
  }
  return y;
}

bool same_bits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace

CATCH_TEST_CASE("kquant: a hand-packed Q4_K block is d·sc·q − dmin·m", "[kquant]") {
  // Scales and mins past 15 on sub-blocks 4-7 use the packed high bits; d and dmin are exact in
  // float16, so every value is exact in float32 and compared as such.
  const int sc[8] = {1, 2, 3, 63, 17, 33, 48, 62}, m[8] = {0, 5, 10, 15, 20, 40, 50, 63};
  int q[256];
  for (int k = 0; k < 256; ++k) q[k] = (k * 7 + 3) % 16;
  const auto b = q4k_block(0.5f, 0.25f, sc, m, q);
  float got[256];
  gguf::dequantise(gguf::row(gguf::TensorType::Q4_K), b.data(), 1, got);
  for (int k = 0; k < 256; ++k) {
    CATCH_INFO("value " << k);
    CATCH_CHECK(got[k] == static_cast<float>(0.5 * sc[k / 32] * q[k] - 0.25 * m[k / 32]));
  }
}

CATCH_TEST_CASE("kquant: a hand-packed Q6_K block is d·sc·(q − 32)", "[kquant]") {
  const int sc[16] = {-128, -5, 1, 127, 7, -64, 33, 2, 100, -1, 0, 9, -77, 64, 15, -32};
  int q[256];
  for (int k = 0; k < 256; ++k) q[k] = (k * 13 + 5) % 64;
  const auto b = q6k_block(0.125f, sc, q);
  float got[256];
  gguf::dequantise(gguf::row(gguf::TensorType::Q6_K), b.data(), 1, got);
  for (int k = 0; k < 256; ++k) {
    CATCH_INFO("value " << k);
    CATCH_CHECK(got[k] == static_cast<float>(0.125 * sc[k / 16] * (q[k] - 32)));
  }
}

CATCH_TEST_CASE("kquant: every path this CPU has gives the plain path's bits", "[kquant]") {
  const auto isas = kq::isas_here();
  CATCH_INFO("paths here: " << isas.size() << ", best " << kq::isa_name(kq::best_isa()));
  // Runs of 16 give pairs of groups of each type (224 rows: Q4_K, Q4_K, Q6_K, Q4_K, Q5_K, Q6_K,
  // Q3_K, Q4_K, Q6_K, Q5_K, Q2_K, ...), which AVX-512 multiplies two at a time.
  for (auto [out, in] : {std::pair<int64_t, int64_t>{7, 256}, {40, 512}, {19, 768}, {96, 256}, {224, 256}})
   for (int64_t run : {1, 8, 16}) {
    const kq::Weight w = random_weight(out, in, static_cast<uint32_t>(out * 3 + in), run);
    for (int64_t m : {1, 2, 3, 7, 8, 9, 16, 17}) {
      const auto x = test::random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(m + out), 3.0f);
      const auto want = product(w, x, m, kq::Isa::Plain);
      for (kq::Isa isa : isas) {
        CATCH_INFO("out " << out << ", in " << in << ", m " << m << ", " << kq::isa_name(isa) << ", runs of " << run);
        CATCH_CHECK(same_bits(product(w, x, m, isa).data(), want.data(), want.size()));
        CATCH_CHECK(same_bits(product(w, x, m, isa, out / 2).data(), want.data(), want.size()));
      }
    }
  }
}

CATCH_TEST_CASE("kquant: a row's output is the same bits alone and at any place in any batch", "[kquant]") {
  const int64_t out = 96, in = 512;  // runs of 8: groups of Q4_K, Q4_K, Q6_K, Q4_K, Q5_K, ...; of 16: pairs of them
  for (int64_t run : {1, 8, 16}) {
  CATCH_INFO("runs of " << run);
  const kq::Weight w = random_weight(out, in, 5, run);
  const auto batch = test::random_values(static_cast<size_t>(17 * in), 11, 2.0f);
  for (kq::Isa isa : kq::isas_here()) {
    const auto all = product(w, batch, 17, isa);
    for (int64_t r = 0; r < 17; ++r) {
      const std::vector<float> one(batch.begin() + r * in, batch.begin() + (r + 1) * in);
      CATCH_INFO(kq::isa_name(isa) << ", row " << r);
      CATCH_CHECK(same_bits(product(w, one, 1, isa).data(), all.data() + r * out, static_cast<size_t>(out)));
    }
  }
  }
}

CATCH_TEST_CASE("kquant: 8 rows of one type interleaved as a group give back each row's blocks, byte for byte", "[kquant]") {
  CATCH_CHECK_THROWS_WITH(kq::interleave(static_cast<uint8_t>(gguf::TensorType::Q8_0), nullptr, nullptr), Catch::Contains("no group layout"));
  const int64_t out = 20, in = 512;  // rows 0-15: two Q4_K groups; 16-18 Q6_K and 19 Q4_K kept one by one
  const kq::Weight w = random_weight(out, in, 3, 8);
  CATCH_REQUIRE(w.groups == std::vector<int64_t>{0, w.supers * kq::group_block_bytes(kq::kQ4_K), -1});
  const kq::Weight w6 = random_weight(24, in, 3, 8);  // rows 16-23: a Q6_K group
  CATCH_REQUIRE(w6.groups.size() == 3);
  CATCH_CHECK(w6.groups[2] == 2 * w6.supers * kq::group_block_bytes(kq::kQ4_K));
  const kq::Weight w5 = random_weight(40, in, 3, 8);  // rows 32-39: a Q5_K group
  CATCH_CHECK(w5.types[32] == kq::kQ5_K);
  CATCH_CHECK(w5.groups[4] >= 0);
  std::mt19937 rng(4);
  for (uint8_t type : {kq::kQ2_K, kq::kQ3_K, kq::kQ4_K, kq::kQ5_K, kq::kQ6_K}) {
    CATCH_INFO("type " << int(type));
    std::vector<std::vector<uint8_t>> blocks(8, std::vector<uint8_t>(static_cast<size_t>(kq::block_bytes(type))));
    const uint8_t* ptrs[8];
    for (int c = 0; c < 8; ++c) {
      for (auto& b : blocks[c]) b = static_cast<uint8_t>(rng());
      ptrs[c] = blocks[c].data();
    }
    std::vector<uint8_t> group(static_cast<size_t>(kq::group_block_bytes(type)));
    CATCH_CHECK(group.size() <= blocks[0].size() * 8 * 1.04);  // Q3_K's scales as bytes: 3.6 % more
    kq::interleave(type, ptrs, group.data());
    for (int c = 0; c < 8; ++c) {
      std::vector<uint8_t> back(blocks[c].size());
      kq::gather(type, group.data(), c, back.data());
      CATCH_CHECK(back == blocks[c]);
    }
  }
}

CATCH_TEST_CASE("kquant: the product is the float64 product of the dequantised weights and quantised rows, within float32 sums",
                "[kquant]") {
  // Each output is 2 · supers fused multiply-adds into each of 8 sums and 7 adds, every product
  // of exact integers and one rounded scale d·dx: each step rounds by at most 2^-24 of the
  // magnitudes summed so far, bounded by the sum of |terms| (Q4_K's scale and min parts apart).
  const int64_t out = 88, in = 1024, m = 5;  // runs of 8: a group of each type (Q3_K at 48, Q2_K at 80)
  for (int64_t run : {1, 8, 16}) {
  CATCH_INFO("runs of " << run);
  const kq::Weight w = random_weight(out, in, 9, run);
  const auto x = test::random_values(static_cast<size_t>(m * in), 13, 4.0f);
  q8::Rows rows;
  q8::resize_rows(rows, m, in);
  q8::quantise_activations(x.data(), in, 0, m, rows);
  const auto y = product(w, x, m, kq::best_isa());
  std::vector<float> wrow(static_cast<size_t>(in));
  for (int64_t c = 0; c < out; ++c) {
    kq::dequantise_row(w, c, wrow.data());
    for (int64_t r = 0; r < m; ++r) {
      double want = 0, magnitude = 0;
      for (int64_t k = 0; k < in; ++k) {
        const double xv = double(rows.q[r * in + k]) * double(rows.d[r * (in / 32) + k / 32]);
        want += double(wrow[k]) * xv;
        magnitude += std::fabs(double(wrow[k]) * xv) + (kq::dmin_offset(w.types[c]) >= 0 ? 2 * std::fabs(xv) * 0.004 * 63 : 0.0);
      }
      CATCH_INFO("row " << r << ", column " << c);
      const double bound = (2.0 * w.supers + 8) * std::ldexp(1.0, -23) * magnitude;
      CATCH_CHECK(std::fabs(double(y[r * out + c]) - want) <= bound);
    }
  }
  }
}

CATCH_TEST_CASE("kquant: tagged rows keep each row's type and blocks, other types are refused", "[kquant]") {
  const kq::Weight w = random_weight(6, 512, 3);
  for (int64_t r = 0; r < 6; ++r) CATCH_CHECK(w.types[r] == type_of(r));
  CATCH_CHECK(w.types[4] == kq::kQ5_K);
  std::vector<uint8_t> bad(static_cast<size_t>(kq::tagged_width(256)), 0);
  bad[0] = 8;  // Q8_0
  CATCH_CHECK_THROWS_WITH(kq::from_tagged(bad.data(), 1, 256), Catch::Contains("type id 8"));
  CATCH_CHECK_THROWS_WITH(kq::from_tagged(bad.data(), 1, 100), Catch::Contains("not whole super-blocks"));
}

namespace {
uint8_t all_q3k(int64_t) { return kq::kQ3_K; }
}  // namespace

CATCH_TEST_CASE("kquant: Q3_K's products are the bits of its exact conversion to Q6_K, on every path", "[kquant]") {
  // Q3_K was served as that conversion (gguf::blocks::q3_k_to_q6_k: scale sc − 32, quant q + 32)
  // until it had its own blocks on the kernel; the integer sums are the same, so the outputs are.
  const int64_t in = 512;
  for (int64_t out : {int64_t{7}, int64_t{16}, int64_t{40}}) {
    const kq::Weight w3 = random_weight(out, in, static_cast<uint32_t>(out), 1, all_q3k);
    const int64_t width = kq::tagged_width(in);
    std::vector<uint8_t> tagged(static_cast<size_t>(out * width), 0);
    uint8_t scratch[kq::kMaxBlockBytes];
    for (int64_t r = 0; r < out; ++r) {
      tagged[r * width] = kq::kQ6_K;
      for (int64_t s = 0; s < w3.supers; ++s)
        gguf::blocks::q3_k_to_q6_k(w3.block(r, s, scratch), tagged.data() + r * width + 1 + s * kq::kQ6_KBytes);
    }
    const kq::Weight w6 = kq::from_tagged(tagged.data(), out, in);
    CATCH_REQUIRE(w6.types[0] == kq::kQ6_K);
    for (int64_t m : {1, 2, 7, 9}) {
      const auto x = test::random_values(static_cast<size_t>(m * in), static_cast<uint32_t>(m * 7 + out), 3.0f);
      for (kq::Isa isa : kq::isas_here()) {
        CATCH_INFO("out " << out << ", m " << m << ", " << kq::isa_name(isa));
        CATCH_CHECK(same_bits(product(w3, x, m, isa).data(), product(w6, x, m, isa).data(), static_cast<size_t>(m * out)));
      }
    }
  }
}
