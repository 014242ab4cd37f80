// The packed 4-bit kernel's weights (q4_kernel.h): empty ones, the file's blocks packed into them
// as they are, and their rows dequantised. The kernels are q4_kernel.cpp.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model/gguf/ggml_blocks.h"
#include "model/kernels/q4_kernel.h"

namespace exspec::q4 {
namespace {

using layout::kVectors;

// Column c's 16 bytes of nibbles of one block of 32 (the file's order) into tile nibbles q.
void put_nibbles(uint8_t* q, int64_t c, const uint8_t* src) {
  for (int64_t g = 0; g < kVectors; ++g) std::memcpy(q + g * 64 + c * 4, src + g * 4, 4);
}

// Column c's 5th bits of one block of 32 (ggml's qh: bit k for input k) into a tile's masks.
void put_high(uint8_t* high, int64_t c, const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  for (int64_t k = 0; k < kBlock; ++k) {
    const int64_t i = layout::high_bit_at(c, k);
    high[i / 8] = static_cast<uint8_t>((high[i / 8] & ~(1u << (i % 8))) | (((bits >> k) & 1u) << (i % 8)));
  }
}

// One of ggml's blocks of 32 into column c of tile t's stored block b: d, then m (kMin), then
// qh (kHigh), then 16 bytes of nibbles.
template <int Parts>
void put_block(Packed<1, Parts>& w, int64_t t, int64_t b, int64_t c, const uint8_t* src) {
  std::memcpy(&w.scales(t, b)[c], src, 2);
  src += 2;
  if constexpr ((Parts & kMin) != 0) std::memcpy(&w.mins(t, b)[c], src, 2), src += 2;
  if constexpr ((Parts & kHigh) != 0) put_high(w.high(t, b), c, src), src += 4;
  put_nibbles(w.nibbles(t, b, 0), c, src);
}

// IQ4_XS's super-block: d, then each block of 32's ls (ggml_blocks.h), then its 16 bytes of nibbles.
void put_block(XsWeight& w, int64_t t, int64_t b, int64_t c, const uint8_t* src) {
  std::memcpy(&w.scales(t, b)[c], src, 2);
  for (int j = 0; j < XsWeight::kSub; ++j) {
    w.multipliers(t, b, j)[c] = static_cast<int8_t>(gguf::blocks::iq4_xs_scale(src, j) - 32);
    put_nibbles(w.nibbles(t, b, j), c, src + 8 + 16 * j);
  }
}

// ggml's bytes a stored block: its blocks of 32 are d, [m], [qh], 16 bytes of nibbles.
template <int64_t Sub, int Parts>
constexpr int64_t file_bytes() {
  if constexpr (Sub > 1) return kXsBlockBytes;
  else return kBlockBytes + ((Parts & kMin) != 0 ? 2 : 0) + ((Parts & kHigh) != 0 ? 4 : 0);
}

}  // namespace

template <int64_t Sub, int Parts>
Packed<Sub, Parts> empty_packed(int64_t out, int64_t in, const int8_t* values) {
  if (out <= 0 || in <= 0 || in % (kBlock * Sub))
    throw std::invalid_argument("q4::empty_weight: expected whole blocks of " + std::to_string(kBlock * Sub) + " inputs");
  Packed<Sub, Parts> w;
  w.out = out, w.in = in;
  w.blocks = in / (kBlock * Sub);
  w.tiles = (out + kTile - 1) / kTile;
  constexpr int top = (Parts & kHigh) != 0 ? 16 : 0;  // what a 5th bit adds
  int largest = 0;  // the largest |q|
  for (int i = 0; i < 16; ++i) {
    if (values[i] == -128 || values[i] + top > 127) throw std::invalid_argument("q4::empty_weight: a value outside [-127, 127]");
    w.values[i] = values[i];
    w.biased[i] = static_cast<uint8_t>(values[i] + 128);
    largest = std::max({largest, -int{values[i]}, values[i] + top});
  }
  // AVX2's pair sums (vpmaddubsw, |x| <= 127) reach 2 · 127 · |q|, two a vector's column lane:
  // int16 holds 4 vectors' at |q| <= 16 and 2 vectors' at |q| <= 32 (32,512 either way).
  w.run = largest <= 16 ? 4 : largest <= 32 ? 2 : 0;
  w.allocate();  // nibbles 0, d 0
  return w;
}

AnyWeight empty_for(const gguf::WeightType& t, int64_t out, int64_t in) {
  if (t.int8 != gguf::Int8Path::Q4 || !t.nibbles) throw std::invalid_argument(std::string("q4::empty_for: ") + t.name + " is not the kernel's");
  if (t.block == kBlock * XsWeight::kSub && t.block_bytes == file_bytes<8, 0>()) return empty_packed<8, 0>(out, in, t.nibbles);
  if (t.block == kBlock) switch (t.block_bytes) {  // ggml's blocks of 32: their size says which parts
      case file_bytes<1, 0>(): return empty_packed<1, 0>(out, in, t.nibbles);
      case file_bytes<1, kMin>(): return empty_packed<1, kMin>(out, in, t.nibbles);
      case file_bytes<1, kHigh>(): return empty_packed<1, kHigh>(out, in, t.nibbles);
      case file_bytes<1, kHigh | kMin>(): return empty_packed<1, kHigh | kMin>(out, in, t.nibbles);
    }
  throw std::invalid_argument(std::string("q4::empty_for: no packed form of ") + t.name + "'s blocks");
}

template <int64_t Sub, int Parts>
void pack_rows_into(Packed<Sub, Parts>& w, const uint8_t* blocks, int64_t r0, int64_t r1) {
  for (int64_t n = r0; n < r1; ++n)
    for (int64_t b = 0; b < w.blocks; ++b)
      put_block(w, n / kTile, b, n % kTile, blocks + ((n - r0) * w.blocks + b) * file_bytes<Sub, Parts>());
}

void pack_rows_into(AnyWeight& w, const uint8_t* blocks, int64_t r0, int64_t r1) {
  std::visit([&](auto& p) { pack_rows_into(p, blocks, r0, r1); }, w);
}

template <int64_t Sub, int Parts>
void dequantise_row(const Packed<Sub, Parts>& w, int64_t row, float* out) {
  const int64_t t = row / kTile, c = row % kTile;
  for (int64_t b = 0; b < w.blocks; ++b)
    for (int64_t j = 0; j < Sub; ++j) {
      const float s = layout::block_scale(w, t, b, j, c);
      float m = 0.0f;
      if constexpr ((Parts & kMin) != 0) m = half_float(w.mins(t, b)[c]);
      for (int64_t k = 0; k < kBlock; ++k) {
        const float v = static_cast<float>(layout::quant(w, t, b, j, c, k)) * s;  // exact
        out[(b * Sub + j) * kBlock + k] = (Parts & kMin) != 0 ? v + m : v;       // one rounding, as ggml's
      }
    }
}

#define EXSPEC_Q4_FORM(S, P)                                                                      \
  template Packed<S, P> empty_packed(int64_t out, int64_t in, const int8_t* values);             \
  template void pack_rows_into(Packed<S, P>& w, const uint8_t* blocks, int64_t r0, int64_t r1); \
  template void dequantise_row(const Packed<S, P>& w, int64_t row, float* out);
EXSPEC_Q4_FORM(1, 0)
EXSPEC_Q4_FORM(8, 0)
EXSPEC_Q4_FORM(1, kMin)
EXSPEC_Q4_FORM(1, kHigh)
EXSPEC_Q4_FORM(1, kHigh | kMin)

}  // namespace exspec::q4
