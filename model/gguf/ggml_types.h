// ggml's tensor types as one table: a row per type, and nothing else in the tree names a type's
// id, block or bytes. Torch-free.
//
// A row says what a block is (its id, elements and bytes, as ggml-common.h defines them), the
// exact values it stands for (its dequantisation, as ggml's dequantize_row_* and gguf-py's
// quants.py compute them: every product of a scale and a quant is exact in float32, and a min
// is added or taken away in one rounding), and how exspec serves it:
// - under a float dtype (float32, bfloat16, float16, float64), a served type is the values it
//   stands for, converted to that dtype;
// - under --dtype int8, one of `Int8Path`: its blocks on a packed kernel as they are, its blocks
//   converted exactly into another packed type's at load (the same values, so the same
//   products), or its values quantised to Q8_0 at load as float weights are. Q4_0 and IQ4_NL
//   keep their 4-bit blocks on a kernel whose products are the Q8_0 kernel's on their exact
//   conversion, bit for bit: a group that multiplies them beside Q8_0 blocks takes that
//   conversion; Q5_0 (its 5th bits) likewise. IQ4_XS keeps its super-blocks on the same kernel
//   (a block of 32's scale d · (ls − 32), exact in float32), and Q4_1 and Q5_1 their blocks (a
//   min's term added in its own product); none has a Q8_0 form, so a group that mixes one with
//   another type is served from its values. Q2_K to Q6_K keep their super-blocks on the K-quant
//   kernel, which takes rows of any of them in one product. MXFP4 is served from its values.
// A type with no row, or a row without a dequantisation, is refused naming the type.
//
// Adding a type: its row below, its dequantisation (and conversion, if any) in
// ggml_blocks.cpp, its tests. docs/models.md's table is checked against these rows.
#pragma once
#include <cstdint>
#include <string>
#include <stdexcept>

#include "model/gguf/ggml_blocks.h"

namespace exspec::gguf {

// ggml's tensor type ids, as numbered in the format.
enum class TensorType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
  I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30, TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
  NVFP4 = 40,
};

enum class Int8Path {
  Refused,     // not served at all
  Float,       // F32, F16, BF16: quantised to Q8_0 at load (model/int8_matmul.h)
  FromValues,  // the values it stands for, quantised to Q8_0 at load as float weights are
  Q8_0,        // Q8_0 blocks on the int8 kernel (model/kernels/q8_kernel.h)
  KQuant,      // Q2_K..Q6_K blocks on the K-quant kernel (model/kernels/kquant_kernel.h)
  Q4,          // 4-bit blocks on the packed 4-bit kernel (model/kernels/q4_kernel.h), `nibbles` their values
};

// One block of the type -> its `block` values, in order.
using Dequantise = void (*)(const uint8_t* block, float* out);
// One block of the type -> one block of `packed_as` (the same number of values) standing for
// the same values, bit for bit.
using Convert = void (*)(const uint8_t* block, uint8_t* out);

struct WeightType {
  TensorType id;
  const char* name;
  int64_t block;        // elements a block
  int64_t block_bytes;  // bytes a block
  Dequantise dequantise;  // null: not served
  Int8Path int8;
  TensorType packed_as;  // Q8_0 and KQuant: the type the kernel gets (itself, or by `convert`);
                         // Q4 with `convert`: Q8_0, the blocks a group that mixes it with Q8_0
                         // blocks takes; Q4 without: itself
  Convert convert;       // null when packed_as is the type itself
  const int8_t* nibbles = nullptr;  // Q4: the 16 values its nibbles stand for (ggml_blocks.h; a 5th bit adds 16)
  constexpr bool is_float() const { return int8 == Int8Path::Float; }
  constexpr bool served() const { return int8 != Int8Path::Refused; }
  // Served under int8 as other blocks or other values than its own (said once at start-up).
  constexpr bool changed_under_int8() const {
    return int8 == Int8Path::FromValues || (convert && (int8 == Int8Path::Q8_0 || int8 == Int8Path::KQuant));
  }
};

// A row per type ggml numbers (ggml-common.h for the blocks), in id order. Types with a
// dequantisation are served; under int8 each goes the way its row says (above).
inline constexpr WeightType kWeightTypes[] = {
    {TensorType::F32, "F32", 1, 4, nullptr, Int8Path::Float, TensorType::F32, nullptr},
    {TensorType::F16, "F16", 1, 2, nullptr, Int8Path::Float, TensorType::F16, nullptr},
    {TensorType::Q4_0, "Q4_0", 32, 18, blocks::q4_0, Int8Path::Q4, TensorType::Q8_0, blocks::q4_0_to_q8_0, blocks::kQ4_0Values},
    {TensorType::Q4_1, "Q4_1", 32, 20, blocks::q4_1, Int8Path::Q4, TensorType::Q4_1, nullptr, blocks::kNibbleValues},
    {TensorType::Q5_0, "Q5_0", 32, 22, blocks::q5_0, Int8Path::Q4, TensorType::Q8_0, blocks::q5_0_to_q8_0, blocks::kQ5_0Values},
    {TensorType::Q5_1, "Q5_1", 32, 24, blocks::q5_1, Int8Path::Q4, TensorType::Q5_1, nullptr, blocks::kNibbleValues},
    {TensorType::Q8_0, "Q8_0", 32, 34, blocks::q8_0, Int8Path::Q8_0, TensorType::Q8_0, nullptr},
    {TensorType::Q8_1, "Q8_1", 32, 36, nullptr, Int8Path::Refused, TensorType::Q8_1, nullptr},
    {TensorType::Q2_K, "Q2_K", 256, 84, blocks::q2_k, Int8Path::KQuant, TensorType::Q2_K, nullptr},
    {TensorType::Q3_K, "Q3_K", 256, 110, blocks::q3_k, Int8Path::KQuant, TensorType::Q3_K, nullptr},
    {TensorType::Q4_K, "Q4_K", 256, 144, blocks::q4_k, Int8Path::KQuant, TensorType::Q4_K, nullptr},
    {TensorType::Q5_K, "Q5_K", 256, 176, blocks::q5_k, Int8Path::KQuant, TensorType::Q5_K, nullptr},
    {TensorType::Q6_K, "Q6_K", 256, 210, blocks::q6_k, Int8Path::KQuant, TensorType::Q6_K, nullptr},
    {TensorType::Q8_K, "Q8_K", 256, 292, nullptr, Int8Path::Refused, TensorType::Q8_K, nullptr},
    {TensorType::IQ2_XXS, "IQ2_XXS", 256, 66, nullptr, Int8Path::Refused, TensorType::IQ2_XXS, nullptr},
    {TensorType::IQ2_XS, "IQ2_XS", 256, 74, nullptr, Int8Path::Refused, TensorType::IQ2_XS, nullptr},
    {TensorType::IQ3_XXS, "IQ3_XXS", 256, 98, nullptr, Int8Path::Refused, TensorType::IQ3_XXS, nullptr},
    {TensorType::IQ1_S, "IQ1_S", 256, 50, nullptr, Int8Path::Refused, TensorType::IQ1_S, nullptr},
    {TensorType::IQ4_NL, "IQ4_NL", 32, 18, blocks::iq4_nl, Int8Path::Q4, TensorType::Q8_0, blocks::iq4_nl_to_q8_0,
     blocks::kIq4nlValues},
    {TensorType::IQ3_S, "IQ3_S", 256, 110, nullptr, Int8Path::Refused, TensorType::IQ3_S, nullptr},
    {TensorType::IQ2_S, "IQ2_S", 256, 82, nullptr, Int8Path::Refused, TensorType::IQ2_S, nullptr},
    {TensorType::IQ4_XS, "IQ4_XS", 256, 136, blocks::iq4_xs, Int8Path::Q4, TensorType::IQ4_XS, nullptr, blocks::kIq4nlValues},
    {TensorType::I8, "I8", 1, 1, nullptr, Int8Path::Refused, TensorType::I8, nullptr},
    {TensorType::I16, "I16", 1, 2, nullptr, Int8Path::Refused, TensorType::I16, nullptr},
    {TensorType::I32, "I32", 1, 4, nullptr, Int8Path::Refused, TensorType::I32, nullptr},
    {TensorType::I64, "I64", 1, 8, nullptr, Int8Path::Refused, TensorType::I64, nullptr},
    {TensorType::F64, "F64", 1, 8, nullptr, Int8Path::Refused, TensorType::F64, nullptr},
    {TensorType::IQ1_M, "IQ1_M", 256, 56, nullptr, Int8Path::Refused, TensorType::IQ1_M, nullptr},
    {TensorType::BF16, "BF16", 1, 2, nullptr, Int8Path::Float, TensorType::BF16, nullptr},
    {TensorType::TQ1_0, "TQ1_0", 256, 54, nullptr, Int8Path::Refused, TensorType::TQ1_0, nullptr},
    {TensorType::TQ2_0, "TQ2_0", 256, 66, nullptr, Int8Path::Refused, TensorType::TQ2_0, nullptr},
    {TensorType::MXFP4, "MXFP4", 32, 17, blocks::mxfp4, Int8Path::FromValues, TensorType::MXFP4, nullptr},
    {TensorType::NVFP4, "NVFP4", 64, 36, nullptr, Int8Path::Refused, TensorType::NVFP4, nullptr},
};

// The row of a type this table has: compile-time facts for the kernels (block bytes).
constexpr const WeightType& row(TensorType id) {
  for (const WeightType& t : kWeightTypes)
    if (t.id == id) return t;
  throw std::logic_error("ggml_types: no row");
}

const WeightType* weight_type(uint32_t id);     // null for a number ggml does not use
std::string type_name(uint32_t id);             // "Q8_0", or "type 77" for an unknown number
std::string served_type_names();                // "F32, F16, ..., Q6_K": for errors and docs
// What --dtype int8 does with the type, in words: "kept as its blocks (the Q8_0 kernel)",
// "converted exactly to Q8_0 blocks at load (the Q8_0 kernel)", "its values quantised to Q8_0 at
// load". Throws std::logic_error at an Int8Path it does not know.
std::string int8_description(const WeightType& t);

// Dequantises `n` consecutive blocks of `t` into n * t.block floats. Throws std::invalid_argument
// for a type that is not served.
void dequantise(const WeightType& t, const uint8_t* blocks, int64_t n, float* out);

}  // namespace exspec::gguf
