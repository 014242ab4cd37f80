#include "model/kernels/kquant_kernel.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model/gguf/half_float.h"
#include "model/kernels/kquant_groups.h"

namespace exspec::kq {
namespace {

constexpr int64_t kSubs = kSuper / kSub;  // 8
constexpr int64_t kRowChunk = 8;          // activation rows that share one decoding of a super-block

uint16_t read16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

float reduce8(const float* a) {  // the order the vector path's lanes fold in
  const float t0 = a[0] + a[4], t1 = a[1] + a[5], t2 = a[2] + a[6], t3 = a[3] + a[7];
  return (t0 + t2) + (t1 + t3);
}

// ---- plain C++: the reference the vector path equals, bit for bit ----

// One super-block as the definition (kquant_kernel.h) reads it: per 16 inputs i a scale and a
// min (0 for the types without), each quant as the signed value the scale multiplies, d, dmin.
struct PlainBlock {
  int sc[16] = {}, m[16] = {}, q[kSuper] = {};
  float d = 0, dmin = 0;
};

void plain_block(uint8_t type, const uint8_t* b, PlainBlock& p) {
  namespace blocks = gguf::blocks;
  p.d = half_float(read16(b + d_offset(type)));
  if (dmin_offset(type) >= 0) p.dmin = half_float(read16(b + dmin_offset(type)));
  switch (type) {
    case kQ2_K:
      for (int i = 0; i < 16; ++i) p.sc[i] = b[i] & 0xF, p.m[i] = b[i] >> 4;
      for (int k = 0; k < kSuper; ++k) p.q[k] = blocks::q2_k_quant(b + 16, k);
      return;
    case kQ3_K: {
      int8_t sc[16];
      q3k_signed_scales(b, sc);
      std::copy(sc, sc + 16, p.sc);
      for (int k = 0; k < kSuper; ++k) p.q[k] = blocks::q3_k_quant(b, k);
      return;
    }
    case kQ4_K:
    case kQ5_K: {
      int sc[kSubs], m[kSubs];
      blocks::k4_scales(b + 4, sc, m);
      for (int i = 0; i < 16; ++i) p.sc[i] = sc[i / 2], p.m[i] = m[i / 2];
      for (int k = 0; k < kSuper; ++k) p.q[k] = type == kQ4_K ? blocks::q4_k_quant(b, k) : blocks::q5_k_quant(b, k);
      return;
    }
    case kQ6_K:
      for (int i = 0; i < 16; ++i) p.sc[i] = static_cast<int8_t>(b[192 + i]);
      for (int k = 0; k < kSuper; ++k) p.q[k] = blocks::q6_k_quant(b, k) - 32;
      return;
  }
  throw std::logic_error("kquant: type id " + std::to_string(type) + " has no plain path");
}

void plain_row(const Weight& w, const q8::Rows& x, int64_t r, int64_t c, float* out) {
  const uint8_t type = w.types[c];
  const bool mins = dmin_offset(type) >= 0;
  float acc[kSubs] = {};
  uint8_t scratch[kMaxBlockBytes];
  PlainBlock p;
  for (int64_t s = 0; s < w.supers; ++s) {
    plain_block(type, w.block(c, s, scratch), p);
    const int8_t* xq = x.q.data() + r * x.blocks * kSub + s * kSuper;
    const float* dx = x.d.data() + r * x.blocks + s * kSubs;
    for (int64_t j = 0; j < kSubs; ++j) {
      int32_t a = 0, b = 0;  // Σ sc · Σ q·qx and Σ m · Σ qx over the sub-block's two sixteens: exact
      for (int64_t i = 2 * j; i < 2 * j + 2; ++i) {
        int32_t dot = 0, sum = 0;
        for (int64_t k = 16 * i; k < 16 * i + 16; ++k) dot += p.q[k] * xq[k], sum += xq[k];
        a += p.sc[i] * dot, b += p.m[i] * sum;
      }
      acc[j] = std::fma(static_cast<float>(a), p.d * dx[j], acc[j]);
      if (mins) acc[j] = std::fma(static_cast<float>(-b), p.dmin * dx[j], acc[j]);
    }
  }
  *out = reduce8(acc);
}

// ---- the vector paths (kquant_simd.inc): AVX-512 VNNI, and AVX2 ----

#define KQ_NS vnni
#define KQ_ATTR EXSPEC_VNNI_TARGET
#define KQ_DOT(acc, u, s) _mm256_dpbusd_epi32(acc, u, s)
#define KQ_VNNI 1
#include "model/kernels/kquant_simd.inc"
#include "model/kernels/kquant_group_simd.inc"
#undef KQ_NS
#undef KQ_ATTR
#undef KQ_DOT
#undef KQ_VNNI
#define KQ_NS avx2
#define KQ_ATTR __attribute__((target("avx2,fma,f16c")))
#define KQ_DOT(acc, u, s) _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)))
#define KQ_VNNI 0
#include "model/kernels/kquant_simd.inc"
#include "model/kernels/kquant_group_simd.inc"
#undef KQ_NS
#undef KQ_ATTR
#undef KQ_DOT
#undef KQ_VNNI

// Whether the columns from c on hold groups g and g + 1 whole, before c1, in one type.
bool pair_whole(const Weight& w, int64_t g, int64_t c, int64_t c1) {
  return c == g * kGroupCols && c + 2 * kGroupCols <= c1 && w.groups[g] >= 0 && w.groups[g + 1] >= 0 &&
         w.types[g * kGroupCols] == w.types[(g + 1) * kGroupCols];
}

}  // namespace

bool is_kquant(uint32_t t) { return t < 256 && block_bytes(static_cast<uint8_t>(t)) > 0; }

int64_t block_bytes(uint8_t type) {
  switch (type) {
    case kQ2_K: return kQ2_KBytes;
    case kQ3_K: return kQ3_KBytes;
    case kQ4_K: return kQ4_KBytes;
    case kQ5_K: return kQ5_KBytes;
    case kQ6_K: return kQ6_KBytes;
  }
  return 0;
}

int64_t tagged_width(int64_t in) { return 1 + in / kSuper * kMaxBlockBytes; }

const uint8_t* Weight::block(int64_t r, int64_t s, uint8_t* scratch) const {
  const int64_t g = r / kGroupCols;
  if (groups[g] < 0) return row(r) + s * block_bytes(types[r]);
  gather(types[r], data.data() + groups[g] + s * group_block_bytes(types[r]), r % kGroupCols, scratch);
  return scratch;
}

Weight from_tagged(const uint8_t* tagged, int64_t out, int64_t in) {
  if (in <= 0 || in % kSuper) throw std::invalid_argument("K-quant rows of " + std::to_string(in) + " inputs are not whole super-blocks of 256");
  Weight w;
  w.out = out, w.in = in, w.supers = in / kSuper;
  const int64_t width = tagged_width(in);
  for (int64_t r = 0; r < out; ++r) {
    const uint8_t t = tagged[r * width];
    if (!block_bytes(t)) throw std::invalid_argument("K-quant row " + std::to_string(r) + " has type id " + std::to_string(t) + ", not a K-quant type (Q2_K to Q6_K)");
    w.types.push_back(t);
  }
  // Whole groups of 8 rows of one type are interleaved; every other row is kept as in the file.
  int64_t total = 0;
  w.offsets.assign(static_cast<size_t>(out), -1);
  for (int64_t g = 0; g * kGroupCols < out; ++g) {
    const int64_t r0 = g * kGroupCols;
    bool whole = r0 + kGroupCols <= out;
    for (int64_t r = r0; whole && r < r0 + kGroupCols; ++r) whole = w.types[r] == w.types[r0];
    w.groups.push_back(whole ? total : -1);
    if (whole) total += w.supers * group_block_bytes(w.types[r0]);
    for (int64_t r = r0; !whole && r < std::min(out, r0 + kGroupCols); ++r)
      w.offsets[r] = total, total += w.supers * block_bytes(w.types[r]);
  }
  w.data = AlignedArray<uint8_t>(static_cast<size_t>(total) + 64);  // a vector load may read past the last block's end
  for (int64_t g = 0; g < static_cast<int64_t>(w.groups.size()); ++g) {
    const uint8_t type = w.types[g * kGroupCols];
    for (int64_t s = 0; w.groups[g] >= 0 && s < w.supers; ++s) {
      const uint8_t* blocks[kGroupCols];
      for (int64_t c = 0; c < kGroupCols; ++c) blocks[c] = tagged + (g * kGroupCols + c) * width + 1 + s * block_bytes(type);
      interleave(type, blocks, w.data.data() + w.groups[g] + s * group_block_bytes(type));
    }
  }
  for (int64_t r = 0; r < out; ++r)
    if (w.offsets[r] >= 0) std::memcpy(w.data.data() + w.offsets[r], tagged + r * width + 1, w.supers * block_bytes(w.types[r]));
  return w;
}

void dequantise_row(const Weight& w, int64_t row, float* out) {
  uint8_t scratch[kMaxBlockBytes];
  const gguf::WeightType& t = *gguf::weight_type(w.types[row]);  // from_tagged took only this kernel's types
  for (int64_t s = 0; s < w.supers; ++s) gguf::dequantise(t, w.block(row, s, scratch), 1, out + s * kSuper);
}

Isa best_isa() {
  static const Isa isa = isa::best(isa::Family::Int8Vl);  // EVEX-encoded ymm registers
  return isa;
}

std::vector<Isa> isas_here() { return isa::here(isa::Family::Int8Vl); }

const char* isa_name(Isa isa) { return isa::name(isa, isa::Family::Int8Vl); }

void multiply(const Weight& w, const q8::Rows& x, float* y, int64_t ldy, int64_t c0, int64_t c1, Isa isa) {
  const bool vnni = isa == Isa::Avx512, vec = vnni || isa == Isa::Avx2;
  // Per row, what Q6_K's offset takes away: computed once a call, for every column.
  thread_local AlignedArray<int32_t> buffer;  // 8 lanes a vector, on 64-byte boundaries
  AlignedArray<int32_t>& lanes = buffer;
  const size_t need = static_cast<size_t>(x.m * w.supers * 2 * 8);
  if (vec && lanes.size() < need) lanes = AlignedArray<int32_t>(need);
  auto* offsets = reinterpret_cast<__m256i*>(lanes.data());
  if (vec) vnni ? vnni::offsets(x, w.supers, offsets) : avx2::offsets(x, w.supers, offsets);
  for (int64_t c = c0; c < c1;) {
    const int64_t g = c / kGroupCols, end = std::min(c1, (g + 1) * kGroupCols);
    // Two groups' 16 columns at once where rows share the decoding: one row read two streams at
    // once more slowly than one (docs/performance.md).
    if (vnni && x.m > 1 && pair_whole(w, g, c, c1)) {
      vnni::groups<vnni::Lanes16>(w, x, lanes.data(), g, 0, 2 * kGroupCols, y, ldy);
      c += 2 * kGroupCols;
      continue;
    }
    if (vec && w.groups[g] >= 0) {  // the group's columns [c, end) at once
      const int64_t a = c - g * kGroupCols, b = end - g * kGroupCols;
      vnni ? vnni::groups<vnni::Lanes8>(w, x, lanes.data(), g, a, b, y, ldy)
           : avx2::groups<avx2::Lanes8>(w, x, lanes.data(), g, a, b, y, ldy);
      c = end;
      continue;
    }
    for (int64_t r0 = 0; r0 < x.m; r0 += kRowChunk) {
      const int64_t r1 = std::min(x.m, r0 + kRowChunk);
      if (vnni) vnni::column(w, x, offsets, r0, r1, c, y, ldy);
      else if (vec) avx2::column(w, x, offsets, r0, r1, c, y, ldy);
      else for (int64_t r = r0; r < r1; ++r) plain_row(w, x, r, c, y + r * ldy + c);
    }
    ++c;
  }
}

}  // namespace exspec::kq
