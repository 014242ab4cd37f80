// Loads a Hugging Face checkpoint directory's weights (single or sharded safetensors),
// checks every expected tensor's presence and shape against the config, converts dtype/device.
#pragma once
#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/model_config.h"

namespace exspec {

using WeightMap = std::unordered_map<std::string, at::Tensor>;

// Names and shapes the decoder needs for this config, in checkpoint order.
std::vector<std::pair<std::string, std::vector<int64_t>>> expected_weights(const ModelConfig& c);

class SafetensorsFile;

// A checkpoint's weights read one at a time, each when it is taken, into a tensor of its own in
// the dtype and on the device asked for. A model built from it holds only what it keeps plus the
// tensor at hand while it loads, and nothing of the files once loaded (no page of a mapping, no
// buffer of the whole file). Opening checks every expected tensor, as load_weights says.
class CheckpointWeights {
 public:
  CheckpointWeights(const std::string& dir, const ModelConfig& c, at::ScalarType dtype, at::Device device);
  ~CheckpointWeights();
  at::Tensor take(const std::string& name) const;

 private:
  std::string dir_;
  at::ScalarType dtype_;
  at::Device device_;
  std::map<std::string, std::shared_ptr<SafetensorsFile>> where_;  // tensor name -> its file
};

// Throws std::runtime_error naming the file and tensor on anything missing or mismatched.
WeightMap load_weights(const std::string& dir, const ModelConfig& c, at::ScalarType dtype, at::Device device);

}  // namespace exspec
