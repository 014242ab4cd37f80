// What the packed 4-bit kernel's tests (test_q4_kernel.cpp: the types with a Q8_0 form;
// test_q4_exact.cpp: IQ4_XS, Q4_1, Q5_1) share: random blocks of a type, its packed weight, the
// rows and a product through one path. Torch-free.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <variant>
#include <vector>

#include "model/gguf/ggml_types.h"
#include "model/gguf/half_float.h"
#include "model/kernels/q4_kernel.h"
#include "model/kernels/q8_kernel.h"

namespace exspec::test {

// The kernel's types (the table's Int8Path::Q4 rows) with an exact Q8_0 form, or without one.
inline std::vector<const gguf::WeightType*> q4_types(bool with_q8_0_form) {
  std::vector<const gguf::WeightType*> out;
  for (const gguf::WeightType& t : gguf::kWeightTypes)
    if (t.int8 == gguf::Int8Path::Q4 && (t.convert != nullptr) == with_q8_0_form) out.push_back(&t);
  return out;
}

inline bool has_min(const gguf::WeightType& t) { return t.id == gguf::TensorType::Q4_1 || t.id == gguf::TensorType::Q5_1; }

// `out` rows of `in / block` random blocks of type t: float16 scales (and mins) of either sign
// (Q4_0's d is max / −8) and of magnitudes a file's have, every other byte random (nibbles, 5th
// bits, IQ4_XS's 6-bit scales).
inline std::vector<uint8_t> random_blocks(const gguf::WeightType& t, int64_t out, int64_t in, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> scale(0.0f, 0.01f);
  std::vector<uint8_t> b(static_cast<size_t>(out * in / t.block * t.block_bytes));
  for (size_t i = 0; i < b.size(); i += static_cast<size_t>(t.block_bytes)) {
    for (int64_t k = 0; k < t.block_bytes; ++k) b[i + k] = static_cast<uint8_t>(g());
    for (int64_t k = 0; k < (has_min(t) ? 4 : 2); k += 2) {
      const uint16_t h = float_half(scale(g));
      std::memcpy(&b[i + k], &h, 2);
    }
  }
  return b;
}

inline q4::AnyWeight packed(const gguf::WeightType& t, const std::vector<uint8_t>& blocks, int64_t out, int64_t in) {
  q4::AnyWeight w = q4::empty_for(t, out, in);
  q4::pack_rows_into(w, blocks.data(), 0, out);
  return w;
}

inline q8::Rows quantised(const std::vector<float>& x, int64_t m, int64_t in) {
  q8::Rows rows;
  q8::resize_rows(rows, m, in);
  q8::quantise_activations(x.data(), in, 0, m, rows);
  return rows;
}

// y [m, out] of a kernel's weight through one path, the columns split at `split` tiles (two
// "threads"): multiply(w, rows, y, ldy, t0, t1).
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
inline std::vector<float> q4_product(const q4::AnyWeight& w, const q8::Rows& rows, q4::Isa isa, int64_t split = -1) {
  return std::visit([&](const auto& p) { return product(p, rows, [isa](auto&&... a) { q4::multiply(a..., isa); }, split); }, w);
}
inline int64_t tiles(const q4::AnyWeight& w) {
  return std::visit([](const auto& p) { return p.tiles; }, w);
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Every row of `out` random rows of type t, packed and dequantised, is ggml's values (the
// table's dequantisation, gguf:*gguf-py*), bit for bit.
inline void check_dequantised_rows(const gguf::WeightType& t, int64_t out, int64_t in, uint32_t seed) {
  CATCH_INFO(t.name);
  const auto blocks = random_blocks(t, out, in, seed);
  const q4::AnyWeight w = packed(t, blocks, out, in);
  std::vector<float> got(static_cast<size_t>(in)), want(static_cast<size_t>(in));
  for (int64_t n = 0; n < out; ++n) {
    std::visit([&](const auto& p) { q4::dequantise_row(p, n, got.data()); }, w);
    gguf::dequantise(t, blocks.data() + n * in / t.block * t.block_bytes, in / t.block, want.data());
    CATCH_CHECK(same_bits(got, want));
  }
}

}  // namespace exspec::test
