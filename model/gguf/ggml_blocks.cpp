#include "model/gguf/ggml_blocks.h"

#include <cstring>

#include "model/gguf/half_float.h"

// Every product of a scale and a quant below is exact in float32 (at most 11 + 6 + 7 significant
// bits), so the order of the factors does not matter; a min is added or taken away in one
// rounding, as ggml and gguf-py do it.
namespace exspec::gguf::blocks {
namespace {

constexpr int8_t kFp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};  // e2m1, doubled

float f16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return half_float(v);
}

uint32_t u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// 2^(e − 128): E8M0 halved, as kvalues_fp4 are doubled (ggml_e8m0_to_fp32_half).
float e8m0_half(uint8_t e) { return bits_float(e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23); }

// A 32-value block's quant j (0..31): the low nibbles are values 0..15, the high 16..31.
int nibble(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4; }

// Q5_0/Q5_1's 5-bit quant j: the nibble and bit j of qh.
int quant5(const uint8_t* qs, uint32_t qh, int j) { return nibble(qs, j) | static_cast<int>(((qh >> j) & 1u) << 4); }

void put_q8_0(const uint8_t* d, const int* q, uint8_t* out) {
  std::memcpy(out, d, 2);
  for (int j = 0; j < 32; ++j) out[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(q[j]));
}

}  // namespace

// Q3_K's 16 scales (6 bits, 0..63; the −32 is the caller's) from their 12 bytes: the low
// nibbles of bytes 0..7 are scales 0..7, their high nibbles 8..15, and bytes 8..11 hold the top
// 2 bits, four to a byte.
void q3_k_scales(const uint8_t* s, int* out) {
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? s[i] & 0xF : s[i - 8] >> 4;
    out[i] = low | (((s[8 + i % 4] >> (2 * (i / 4))) & 3) << 4);
  }
}

// Q3_K's quant k (0..255) as −4..3, and Q2_K's as 0..3: value k is in the 32-byte run of its
// half (k / 128) at l = k % 32, bits 2·((k % 128) / 32); Q3_K's high bit is bit k / 32 of hmask[l].
int q3_k_quant(const uint8_t* b, int k) {
  const int half = k / 128, part = (k % 128) / 32, l = k % 32;
  const int low = (b[32 + 32 * half + l] >> (2 * part)) & 3;
  return low - ((b[l] >> (4 * half + part)) & 1 ? 0 : 4);
}

int q2_k_quant(const uint8_t* qs, int k) { return (qs[32 * (k / 128) + k % 32] >> (2 * ((k % 128) / 32))) & 3; }

void k4_scales(const uint8_t* s, int* sc, int* m) {
  for (int j = 0; j < 4; ++j) sc[j] = s[j] & 63, m[j] = s[j + 4] & 63;
  for (int j = 4; j < 8; ++j) {
    sc[j] = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
    m[j] = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

int q4_k_quant(const uint8_t* b, int k) {
  const uint8_t byte = b[16 + 32 * (k / 64) + k % 32];
  return (k / 32) % 2 ? byte >> 4 : byte & 0xF;
}

int q5_k_quant(const uint8_t* b, int k) { return q4_k_quant(b + 32, k) | (((b[16 + k % 32] >> (k / 32)) & 1) << 4); }

int q6_k_quant(const uint8_t* b, int k) {
  const int half = k / 128, l = k % 32, part = (k % 128) / 32;
  const uint8_t ql = b[64 * half + l + (part & 1) * 32];
  const int low = part < 2 ? ql & 0xF : ql >> 4;
  return low | (((b[128 + 32 * half + l] >> (2 * part)) & 3) << 4);
}

void q4_0(const uint8_t* b, float* out) {
  const float d = f16(b);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(nibble(b + 2, j) - 8) * d;
}

void q4_1(const uint8_t* b, float* out) {
  const float d = f16(b), m = f16(b + 2);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(nibble(b + 4, j)) * d + m;
}

void q5_0(const uint8_t* b, float* out) {
  const float d = f16(b);
  const uint32_t qh = u32(b + 2);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(quant5(b + 6, qh, j) - 16) * d;
}

void q5_1(const uint8_t* b, float* out) {
  const float d = f16(b), m = f16(b + 2);
  const uint32_t qh = u32(b + 4);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(quant5(b + 8, qh, j)) * d + m;
}

void q8_0(const uint8_t* b, float* out) {
  const float d = f16(b);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

void iq4_nl(const uint8_t* b, float* out) {
  const float d = f16(b);
  for (int j = 0; j < 32; ++j) out[j] = d * static_cast<float>(kIq4nlValues[nibble(b + 2, j)]);
}

void mxfp4(const uint8_t* b, float* out) {
  const float d = e8m0_half(b[0]);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(kFp4[nibble(b + 1, j)]) * d;
}

void q2_k(const uint8_t* b, float* out) {
  const float d = f16(b + 80), dmin = f16(b + 82);
  for (int k = 0; k < 256; ++k) {
    const uint8_t sc = b[k / 16];
    const float dl = d * static_cast<float>(sc & 0xF), ml = dmin * static_cast<float>(sc >> 4);
    out[k] = dl * static_cast<float>(q2_k_quant(b + 16, k)) - ml;
  }
}

void q3_k(const uint8_t* b, float* out) {
  int sc[16];
  q3_k_scales(b + 96, sc);
  const float d = f16(b + 108);
  for (int k = 0; k < 256; ++k) out[k] = d * static_cast<float>(sc[k / 16] - 32) * static_cast<float>(q3_k_quant(b, k));
}

// Q4_K and Q5_K: d·sc·q − dmin·m, the quants 4 or 5 bits.
template <int (*quant)(const uint8_t*, int)>
void k4(const uint8_t* b, float* out) {
  const float d = f16(b), dmin = f16(b + 2);
  int sc[8], m[8];
  k4_scales(b + 4, sc, m);
  for (int k = 0; k < 256; ++k)
    out[k] = d * static_cast<float>(sc[k / 32]) * static_cast<float>(quant(b, k)) - dmin * static_cast<float>(m[k / 32]);
}

void q4_k(const uint8_t* b, float* out) { k4<q4_k_quant>(b, out); }
void q5_k(const uint8_t* b, float* out) { k4<q5_k_quant>(b, out); }

void q6_k(const uint8_t* b, float* out) {
  const float d = f16(b + 208);
  for (int k = 0; k < 256; ++k)
    out[k] = d * static_cast<float>(static_cast<int8_t>(b[192 + k / 16])) * static_cast<float>(q6_k_quant(b, k) - 32);
}

int iq4_xs_scale(const uint8_t* b, int ib) {
  uint16_t sh;
  std::memcpy(&sh, b + 2, 2);
  return ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((sh >> (2 * ib)) & 3) << 4);
}

void iq4_xs(const uint8_t* b, float* out) {
  const float d = f16(b);
  for (int ib = 0; ib < 8; ++ib) {
    const float dl = d * static_cast<float>(iq4_xs_scale(b, ib) - 32);
    for (int j = 0; j < 32; ++j) out[32 * ib + j] = dl * static_cast<float>(kIq4nlValues[nibble(b + 8 + 16 * ib, j)]);
  }
}

void q4_0_to_q8_0(const uint8_t* b, uint8_t* out) {
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = nibble(b + 2, j) - 8;
  put_q8_0(b, q, out);
}

void q5_0_to_q8_0(const uint8_t* b, uint8_t* out) {
  int q[32];
  const uint32_t qh = u32(b + 2);
  for (int j = 0; j < 32; ++j) q[j] = quant5(b + 6, qh, j) - 16;
  put_q8_0(b, q, out);
}

void iq4_nl_to_q8_0(const uint8_t* b, uint8_t* out) {
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = kIq4nlValues[nibble(b + 2, j)];
  put_q8_0(b, q, out);
}

void q3_k_to_q6_k(const uint8_t* b, uint8_t* out) {
  std::memset(out, 0, 210);
  int sc[16];
  q3_k_scales(b + 96, sc);
  for (int i = 0; i < 16; ++i) out[192 + i] = static_cast<uint8_t>(static_cast<int8_t>(sc[i] - 32));
  for (int k = 0; k < 256; ++k) {  // q6_k_quant's layout, written
    const int q = q3_k_quant(b, k) + 32, half = k / 128, l = k % 32, part = (k % 128) / 32;
    out[64 * half + l + (part & 1) * 32] |= static_cast<uint8_t>((q & 0xF) << (part < 2 ? 0 : 4));
    out[128 + 32 * half + l] |= static_cast<uint8_t>((q >> 4) << (2 * part));
  }
  std::memcpy(out + 208, b + 108, 2);
}

}  // namespace exspec::gguf::blocks
