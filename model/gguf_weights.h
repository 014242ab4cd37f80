// A GGUF file's weights handed to the decoder by their Hugging Face names (model/decoder.h's
// WeightSource), each checked at open: present, of the shape the metadata implies, of a type
// served (model/gguf/ggml_types.h's table). F32, F16 and BF16 convert to the served dtype. A
// quantised type is, under --dtype int8, what its row's Int8Path says (its blocks, or another
// type's blocks converted exactly, on a packed kernel; or its values, quantised at load), and
// under another dtype the exact values its blocks stand for.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <set>
#include <string>

#include "model/model_config.h"

namespace exspec {
namespace gguf {

class GgufFile;

class GgufWeights {
 public:
  // Throws naming the file and tensor: missing, mis-shaped, or of a type not served.
  GgufWeights(std::shared_ptr<const GgufFile> file, const ModelConfig& c, at::ScalarType dtype, at::Device device);
  at::Tensor take(const std::string& hf_name) const;

 private:
  std::shared_ptr<const GgufFile> file_;
  ModelConfig config_;
  at::ScalarType dtype_;
  at::Device device_;
  std::set<std::string> from_values_;  // under int8: tensors of groups that mix paths, served from their values
  std::set<std::string> to_q8_0_;      // under int8: 4-bit tensors of groups beside Q8_0 blocks, converted to those
  void plan_groups();                  // fills both, saying what it changed
};

}  // namespace gguf
}  // namespace exspec
