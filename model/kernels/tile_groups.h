// The storage the int8 family's tiled kernels share (q8_kernel.h: Q8_0 blocks; q4_kernel.h: 4-bit
// blocks): tiles of 16 output columns, four tiles stored together so that a one-row product
// (four tiles at a time) reads one stream. For each group of four tiles and each block of 32
// inputs: the four tiles' quants, QuantBytes each, then their ScaleBytes each (16 float16 scales;
// Q4_1 and Q5_1 add 16 float16 mins). Torch-free.
#pragma once
#include <cstdint>

#include "model/kernels/aligned_array.h"

namespace exspec {

template <int64_t QuantBytes, int64_t ScaleBytes = 2 * 16>
struct TileGroups {
  static constexpr int64_t kTile = 16, kGroup = 4;
  static constexpr int64_t kGroupBlock = kGroup * (QuantBytes + ScaleBytes);

  int64_t in = 0, out = 0, blocks = 0, tiles = 0;
  AlignedArray<uint8_t> data;
  int64_t bytes() const { return static_cast<int64_t>(data.bytes()); }
  uint8_t* quants(int64_t t, int64_t b) { return data.data() + offset(t, b) + (t % kGroup) * QuantBytes; }
  const uint8_t* quants(int64_t t, int64_t b) const { return const_cast<TileGroups*>(this)->quants(t, b); }
  uint16_t* scales(int64_t t, int64_t b) {
    return reinterpret_cast<uint16_t*>(data.data() + offset(t, b) + kGroup * QuantBytes + (t % kGroup) * ScaleBytes);
  }
  const uint16_t* scales(int64_t t, int64_t b) const { return const_cast<TileGroups*>(this)->scales(t, b); }
  // Zeroed storage for the groups of four tiles `tiles` rounds up to.
  void allocate() { data = AlignedArray<uint8_t>(static_cast<size_t>((tiles + kGroup - 1) / kGroup * blocks * kGroupBlock)); }

 private:
  int64_t offset(int64_t t, int64_t b) const { return ((t / kGroup) * blocks + b) * kGroupBlock; }
};

}  // namespace exspec
