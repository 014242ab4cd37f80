// Loads a Hugging Face checkpoint directory's weights (single or sharded safetensors),
// checks every expected tensor's presence and shape against the config, converts dtype/device.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/model_config.h"

namespace exspec {

using WeightMap = std::unordered_map<std::string, at::Tensor>;

// Names and shapes the decoder needs for this config, in checkpoint order.
std::vector<std::pair<std::string, std::vector<int64_t>>> expected_weights(const ModelConfig& c);

// Throws std::runtime_error naming the file and tensor on anything missing or mismatched.
WeightMap load_weights(const std::string& dir, const ModelConfig& c, at::ScalarType dtype, at::Device device);

}  // namespace exspec
