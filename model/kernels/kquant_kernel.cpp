#include "model/kernels/kquant_kernel.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model/kernels/half_float.h"
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

// Q4_K's 12 bytes of scales: sc_j, m_j for j < 4 in the low 6 bits of bytes j and j + 4; for
// j >= 4, the low 4 bits in byte j + 4 (sc low nibble, m high nibble) and the top 2 in the top
// bits of bytes j − 4 (sc) and j (m).
void q4k_scales(const uint8_t* s, int32_t* sc, int32_t* m) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = s[j] & 63;
    m[j] = s[j + 4] & 63;
  }
  for (int j = 4; j < 8; ++j) {
    sc[j] = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
    m[j] = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Q6_K's quant k (0..255) of a super-block, 0..63 (the −32 is the caller's).
int32_t q6k_quant(const uint8_t* b, int64_t k) {
  const int64_t half = k / 128, l = k % 32, part = (k % 128) / 32;  // part: which 32 of the half
  const uint8_t* ql = b + 64 * half + l + (part & 1) * 32;
  const uint8_t* qh = b + 128 + 32 * half + l;
  const int32_t low = part < 2 ? (*ql & 0xF) : (*ql >> 4);
  return low | (((*qh >> (2 * part)) & 3) << 4);
}

int32_t q4k_quant(const uint8_t* b, int64_t k) {  // 0..15
  const uint8_t byte = b[16 + 32 * (k / 64) + k % 32];
  return (k / 32) % 2 ? byte >> 4 : byte & 0xF;
}

float reduce8(const float* a) {  // the order the vector path's lanes fold in
  const float t0 = a[0] + a[4], t1 = a[1] + a[5], t2 = a[2] + a[6], t3 = a[3] + a[7];
  return (t0 + t2) + (t1 + t3);
}

// ---- plain C++: the reference the vector path equals, bit for bit ----

void plain_row(const Weight& w, const q8::Rows& x, int64_t r, int64_t c, float* out) {
  const uint8_t type = w.types[c];
  float acc[kSubs] = {};
  uint8_t scratch[kQ6_KBytes];
  for (int64_t s = 0; s < w.supers; ++s) {
    const uint8_t* b = w.block(c, s, scratch);
    const int8_t* xq = x.q.data() + r * x.blocks * kSub + s * kSuper;
    const float* dx = x.d.data() + r * x.blocks + s * kSubs;
    const int32_t* corr = x.corr.data() + r * x.blocks + s * kSubs;
    int32_t sc[kSubs], m[kSubs];
    if (type == kQ4_K) q4k_scales(b + 4, sc, m);
    const float d = half_float(read16(type == kQ4_K ? b : b + 208)), dmin = half_float(read16(b + 2));
    for (int64_t j = 0; j < kSubs; ++j) {
      int32_t a = 0;
      if (type == kQ4_K) {
        int32_t dot = 0;
        for (int64_t k = 0; k < kSub; ++k) dot += q4k_quant(b, j * kSub + k) * xq[j * kSub + k];
        a = sc[j] * dot;
      } else {
        for (int64_t h = 0; h < 2; ++h) {
          int32_t dot = 0;
          for (int64_t k = h * 16; k < h * 16 + 16; ++k) dot += (q6k_quant(b, j * kSub + k) - 32) * xq[j * kSub + k];
          a += static_cast<int8_t>(b[192 + 2 * j + h]) * dot;
        }
      }
      acc[j] = std::fma(static_cast<float>(a), d * dx[j], acc[j]);
      if (type == kQ4_K) acc[j] = std::fma(static_cast<float>(-(m[j] * (-corr[j] / 128))), dmin * dx[j], acc[j]);
    }
  }
  *out = reduce8(acc);
}

// ---- AVX-512 VNNI on 256-bit registers: vpdpbusd takes the weight's quants as its unsigned bytes ----

#define EXSPEC_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

// Eight vectors of eight int32 lanes -> one vector of their eight sums (exact: integers).
EXSPEC_VNNI inline __m256i sum8(const __m256i* v) {
  const __m256i a = _mm256_hadd_epi32(v[0], v[1]), b = _mm256_hadd_epi32(v[2], v[3]);
  const __m256i c = _mm256_hadd_epi32(v[4], v[5]), d = _mm256_hadd_epi32(v[6], v[7]);
  const __m256i ab = _mm256_hadd_epi32(a, b), cd = _mm256_hadd_epi32(c, d);  // per 128-bit half
  // ab = [v0 v1 v2 v3 (low halves) | v0 v1 v2 v3 (high halves)], cd likewise for v4..v7
  const __m256i lo = _mm256_permute2x128_si256(ab, cd, 0x20), hi = _mm256_permute2x128_si256(ab, cd, 0x31);
  return _mm256_add_epi32(lo, hi);
}

EXSPEC_VNNI inline float reduce8(__m256 a) {
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));  // a_i + a_{i+4}
  const __m128 u = _mm_add_ps(t, _mm_movehl_ps(t, t));                                  // (t0 + t2), (t1 + t3)
  return _mm_cvtss_f32(_mm_add_ss(u, _mm_shuffle_ps(u, u, 1)));
}

// One super-block's 256 quants as eight vectors of 32 unsigned bytes, sub-block by sub-block.
EXSPEC_VNNI inline void q4k_quants(const uint8_t* b, __m256i* q) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  for (int p = 0; p < 4; ++p) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * p));
    q[2 * p] = _mm256_and_si256(v, low);
    q[2 * p + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
  }
}

EXSPEC_VNNI inline void q6k_quants(const uint8_t* b, __m256i* q) {
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(0x30);
  for (int n = 0; n < 2; ++n) {
    const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * n));
    const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * n + 32));
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * n));
    q[4 * n] = _mm256_or_si256(_mm256_and_si256(l0, low), _mm256_and_si256(_mm256_slli_epi16(h, 4), high));
    q[4 * n + 1] = _mm256_or_si256(_mm256_and_si256(l1, low), _mm256_and_si256(_mm256_slli_epi16(h, 2), high));
    q[4 * n + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low), _mm256_and_si256(h, high));
    q[4 * n + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low),
                                   _mm256_and_si256(_mm256_srli_epi16(h, 2), high));
  }
}

// Q4_K's scales and mins as float lanes (exact: 0..63). The 12 bytes as three 32-bit words: sc[0..3]
// and m[0..3] are the low 6 bits of words 0 and 1; sc[4..7] the low nibbles of word 2 with the
// top 2 bits of word 0's bytes (shifted down 2 within each byte), m[4..7] its high nibbles with
// word 1's.
EXSPEC_VNNI inline void q4k_scales_vec(const uint8_t* s, __m256* sc, __m256* m) {
  uint32_t w[3];
  std::memcpy(w, s, 12);
  const uint32_t low6 = 0x3F3F3F3F, nib = 0x0F0F0F0F, top = 0x30303030;
  const uint64_t scs = (w[0] & low6) | (uint64_t((w[2] & nib) | ((w[0] >> 2) & top)) << 32);
  const uint64_t mins = (w[1] & low6) | (uint64_t(((w[2] >> 4) & nib) | ((w[1] >> 2) & top)) << 32);
  *sc = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(scs))));
  *m = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(mins))));
}

// Eight vectors of lane sums (sub-blocks 0..7, lanes 0-3 a sub-block's first 16 inputs, 4-7 its
// last 16) -> the halves' sums in the order [0a 1a 2a 3a | 0b 1b 2b 3b] and [4a .. 7a | 4b .. 7b].
EXSPEC_VNNI inline void halves(const __m256i* v, __m256i* lo, __m256i* hi) {
  *lo = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  *hi = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
}

// Q6_K's 16 scales as int32 lanes in halves()'s order: [s0 s2 s4 s6 | s1 s3 s5 s7], [s8 .. | s9 ..].
EXSPEC_VNNI inline void q6k_scales(const uint8_t* b, __m256i* lo, __m256i* hi) {
  const __m128i order = _mm_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
  const __m128i s = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192)), order);
  *lo = _mm256_cvtepi8_epi32(s);
  *hi = _mm256_cvtepi8_epi32(_mm_unpackhi_epi64(s, s));
}

// 32 · Σ qx over each 16 inputs of a row's super-blocks, in halves()'s order (two vectors a
// super-block): what Q6_K's offset of 32 takes away, the same for every column.
EXSPEC_VNNI void q6k_offsets(const q8::Rows& x, int64_t supers, __m256i* out) {
  const __m256i k32 = _mm256_set1_epi8(32);
  for (int64_t r = 0; r < x.m; ++r) {
    for (int64_t s = 0; s < supers; ++s) {
      const int8_t* xq = x.q.data() + r * x.blocks * kSub + s * kSuper;
      __m256i o[kSubs];
      for (int j = 0; j < kSubs; ++j)
        o[j] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), k32,
                                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + j * kSub)));
      halves(o, out + (r * supers + s) * 2, out + (r * supers + s) * 2 + 1);
    }
  }
}

// The sub-blocks' integer sums A_j of one Q6_K super-block against one row (lanes 0..7).
EXSPEC_VNNI inline __m256i q6k_sums(const __m256i* q, const int8_t* xq, const __m256i* off, __m256i sc_lo, __m256i sc_hi) {
  __m256i dots[kSubs];
  for (int j = 0; j < kSubs; ++j)
    dots[j] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), q[j],
                                  _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + j * kSub)));
  __m256i lo, hi;
  halves(dots, &lo, &hi);
  lo = _mm256_mullo_epi32(_mm256_sub_epi32(lo, off[0]), sc_lo);
  hi = _mm256_mullo_epi32(_mm256_sub_epi32(hi, off[1]), sc_hi);
  return _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20), _mm256_permute2x128_si256(lo, hi, 0x31));
}

EXSPEC_VNNI void vnni_column(const Weight& w, const q8::Rows& x, const __m256i* offsets, int64_t r0, int64_t r1,
                             int64_t c, float* y, int64_t ldy) {
  const uint8_t type = w.types[c];
  const bool q4 = type == kQ4_K;
  const int64_t bb = block_bytes(type), ldq = x.blocks * kSub;
  __m256 acc[kRowChunk];
  for (int64_t r = r0; r < r1; ++r) acc[r - r0] = _mm256_setzero_ps();
  for (int64_t s = 0; s < w.supers; ++s) {
    const uint8_t* b = w.row(c) + s * bb;
    __m256i q[kSubs], sc_lo = _mm256_setzero_si256(), sc_hi = sc_lo;
    __m256 sc4 = _mm256_setzero_ps(), m4 = sc4;
    float d, dmin = 0.0f;
    if (q4) {
      q4k_scales_vec(b + 4, &sc4, &m4);
      q4k_quants(b, q);
      d = half_float(read16(b));
      dmin = half_float(read16(b + 2));
    } else {
      q6k_scales(b, &sc_lo, &sc_hi);
      q6k_quants(b, q);
      d = half_float(read16(b + 208));
    }
    for (int64_t r = r0; r < r1; ++r) {
      const int8_t* xq = x.q.data() + r * ldq + s * kSuper;
      const __m256 dx = _mm256_loadu_ps(x.d.data() + r * x.blocks + s * kSubs);
      if (q4) {
        __m256i dots[kSubs];
        for (int j = 0; j < kSubs; ++j)
          dots[j] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), q[j],
                                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + j * kSub)));
        // sc · Σ q·qx and m · Σ qx are exact in float32 (below 2^22): the products of their floats.
        const __m256 a = _mm256_mul_ps(_mm256_cvtepi32_ps(sum8(dots)), sc4);
        const __m256i corr = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.corr.data() + r * x.blocks + s * kSubs));
        const __m256 mx = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), corr), 7)), m4);
        const __m256 t = _mm256_fmadd_ps(a, _mm256_mul_ps(_mm256_set1_ps(d), dx), acc[r - r0]);
        acc[r - r0] = _mm256_fnmadd_ps(mx, _mm256_mul_ps(_mm256_set1_ps(dmin), dx), t);
      } else {
        const __m256i a = q6k_sums(q, xq, offsets + (r * w.supers + s) * 2, sc_lo, sc_hi);
        acc[r - r0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(a), _mm256_mul_ps(_mm256_set1_ps(d), dx), acc[r - r0]);
      }
    }
  }
  for (int64_t r = r0; r < r1; ++r) y[r * ldy + c] = reduce8(acc[r - r0]);
}

bool has_vnni() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c") &&
         __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

}  // namespace

bool is_kquant(uint32_t t) { return t == kQ4_K || t == kQ6_K; }

int64_t block_bytes(uint8_t type) { return type == kQ4_K ? kQ4_KBytes : type == kQ6_K ? kQ6_KBytes : 0; }

int64_t tagged_width(int64_t in) { return 1 + in / kSuper * kQ6_KBytes; }

void dequantise_block(uint8_t type, const uint8_t* b, float* out) {
  if (type == kQ4_K) {
    int32_t sc[kSubs], m[kSubs];
    q4k_scales(b + 4, sc, m);
    const float d = half_float(read16(b)), dmin = half_float(read16(b + 2));
    for (int64_t k = 0; k < kSuper; ++k) {
      const float d1 = d * static_cast<float>(sc[k / kSub]), m1 = dmin * static_cast<float>(m[k / kSub]);
      out[k] = d1 * static_cast<float>(q4k_quant(b, k)) - m1;
    }
  } else {
    const float d = half_float(read16(b + 208));
    for (int64_t k = 0; k < kSuper; ++k)
      out[k] = d * static_cast<float>(static_cast<int8_t>(b[192 + k / 16])) * static_cast<float>(q6k_quant(b, k) - 32);
  }
}

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
    if (!block_bytes(t)) throw std::invalid_argument("K-quant row " + std::to_string(r) + " has type id " + std::to_string(t) + ", not Q4_K or Q6_K");
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
  uint8_t scratch[kQ6_KBytes];
  for (int64_t s = 0; s < w.supers; ++s) dequantise_block(w.types[row], w.block(row, s, scratch), out + s * kSuper);
}

Isa best_isa() { return has_vnni() ? Isa::Avx512Vnni : Isa::Plain; }

std::vector<Isa> isas_here() {
  std::vector<Isa> v{Isa::Plain};
  if (has_vnni()) v.push_back(Isa::Avx512Vnni);
  return v;
}

const char* isa_name(Isa isa) { return isa == Isa::Avx512Vnni ? "avx512_vnni" : "plain"; }

void multiply(const Weight& w, const q8::Rows& x, float* y, int64_t ldy, int64_t c0, int64_t c1, Isa isa) {
  // Per row, what Q6_K's offset takes away: computed once a call, for every column.
  thread_local AlignedArray<int32_t> buffer;  // 8 lanes a vector, on 64-byte boundaries
  AlignedArray<int32_t>& lanes = buffer;
  const size_t need = static_cast<size_t>(x.m * w.supers * 2 * 8);
  if (isa == Isa::Avx512Vnni && lanes.size() < need) lanes = AlignedArray<int32_t>(need);
  auto* offsets = reinterpret_cast<__m256i*>(lanes.data());
  if (isa == Isa::Avx512Vnni) q6k_offsets(x, w.supers, offsets);
  for (int64_t c = c0; c < c1;) {
    const int64_t g = c / kGroupCols, end = std::min(c1, (g + 1) * kGroupCols);
    if (isa == Isa::Avx512Vnni && w.groups[g] >= 0) {  // the group's columns [c, end) at once
      vnni_group(w, x, lanes.data(), g, c - g * kGroupCols, end - g * kGroupCols, y, ldy);
      c = end;
      continue;
    }
    if (isa == Isa::Avx512Vnni) {
      for (int64_t r0 = 0; r0 < x.m; r0 += kRowChunk) vnni_column(w, x, offsets, r0, std::min(x.m, r0 + kRowChunk), c, y, ldy);
    } else {
      for (int64_t r = 0; r < x.m; ++r) plain_row(w, x, r, c, y + r * ldy + c);
    }
    ++c;
  }
}

}  // namespace exspec::kq
