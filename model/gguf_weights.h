// A GGUF file's weights handed to the decoder by their Hugging Face names (model/decoder.h's
// WeightSource), each checked at open: present, of the shape the metadata implies, of a type
// served. F32, F16 and BF16 convert to the served dtype; Q8_0 goes to the int8 kernels as its
// blocks (dtype int8) or, under another dtype, as the exact values q · d it stands for; Q4_K and
// Q6_K go to their own kernel as their blocks (int8: tagged rows, model/kquant_matmul.h) or,
// under another dtype, as the float32 values they stand for.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
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
};

}  // namespace gguf
}  // namespace exspec
