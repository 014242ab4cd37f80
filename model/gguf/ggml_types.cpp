#include "model/gguf/ggml_types.h"

#include <stdexcept>

namespace exspec::gguf {

const WeightType* weight_type(uint32_t id) {
  for (const WeightType& t : kWeightTypes)
    if (static_cast<uint32_t>(t.id) == id) return &t;
  return nullptr;
}

std::string type_name(uint32_t id) {
  const WeightType* t = weight_type(id);
  return t ? t->name : "type " + std::to_string(id);
}

std::string served_type_names() {
  std::string out;
  for (const WeightType& t : kWeightTypes)
    if (t.served()) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

std::string int8_description(const WeightType& t) {
  switch (t.int8) {
    case Int8Path::Refused: return "not served";
    case Int8Path::Float: return "quantised to Q8_0 at load";
    case Int8Path::FromValues: return "its values quantised to Q8_0 at load";
    case Int8Path::Q4: return "kept as its blocks (the packed 4-bit kernel)";
    case Int8Path::Q8_0:
    case Int8Path::KQuant: {
      const std::string kernel = t.int8 == Int8Path::Q8_0 ? "the Q8_0 kernel" : "the K-quant kernel";
      if (t.convert) return std::string("converted exactly to ") + type_name(uint32_t(t.packed_as)) + " blocks at load (" + kernel + ")";
      return "kept as its blocks (" + kernel + ")";
    }
  }
  throw std::logic_error("int8_description: unknown Int8Path");
}

void dequantise(const WeightType& t, const uint8_t* blocks, int64_t n, float* out) {
  if (!t.dequantise) throw std::invalid_argument(std::string("dequantise: type ") + t.name + " is not served");
  for (int64_t i = 0; i < n; ++i) t.dequantise(blocks + i * t.block_bytes, out + i * t.block);
}

}  // namespace exspec::gguf
