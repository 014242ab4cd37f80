// float16 and bfloat16 as raw 16-bit values, converted to and from float32 in plain C++: GGUF's
// block types (ggml_types.h), the kernels' scalar paths and their packing use these, and each
// conversion gives the same bits as the instructions the vector paths use (vcvtph2ps / vcvtps2ph,
// vcvtneps2bf16). Torch-free.
#pragma once
#include <cstdint>
#include <cstring>

namespace exspec {

inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// bfloat16 -> float32: exact.
inline float bf16_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

// float32 -> bfloat16, round to nearest even; NaN stays NaN (quiet).
inline uint16_t float_bf16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// float16 -> float32: exact (subnormals included).
inline float half_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));  // inf, NaN
  if (exp != 0) return bits_float(sign | ((exp + 112) << 23) | (man << 13));
  // subnormal: man · 2^-24, exact in float32
  const float mag = static_cast<float>(man) * bits_float(0x33800000u);  // 2^-24
  return bits_float(sign | float_bits(mag));
}

// float32 -> float16, round to nearest even (what vcvtps2ph does with imm 0); overflow -> inf.
inline uint16_t float_half(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;     // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;    // rounds to >= 65520: inf
  if (a >= 0x38800000u) {                         // normal float16 (>= 2^-14)
    const uint32_t r = a + 0xfffu + ((a >> 13) & 1u) - (112u << 23);
    return sign | static_cast<uint16_t>(r >> 13);
  }
  if (a < 0x33000000u) return sign;               // below half the smallest subnormal: 0
  // subnormal float16: shift the 24-bit significand, round to nearest even
  const uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - e;                 // 14..24
  const uint32_t half = 1u << (shift - 1), rest = m & ((1u << shift) - 1);
  uint32_t q = m >> shift;
  if (rest > half || (rest == half && (q & 1u))) ++q;
  return sign | static_cast<uint16_t>(q);
}

}  // namespace exspec
