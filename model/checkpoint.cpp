#include "model/checkpoint.h"

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/io_util.h"
#include "model/layer_weights.h"
#include "model/safetensors.h"

namespace exspec {

std::vector<std::pair<std::string, std::vector<int64_t>>> expected_weights(const ModelConfig& c) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> w;
  auto add = [&](const WeightName& n, int64_t layer) {
    if (!has_weight(c, n, layer)) return;
    if (!is_expert_weight(n)) return w.push_back({hf_weight_name(c.arch, n.id, layer), weight_shape(c, n)});
    for (int64_t e = 0; e < c.experts.num_experts; ++e) w.push_back({hf_weight_name(c.arch, n.id, layer, e), weight_shape(c, n)});
  };
  add(weight_name(WeightId::Embed), 0);
  for (int64_t i = 0; i < c.num_layers; ++i)
    for (const WeightName& n : layer_weights()) add(n, i);
  for (const WeightName& n : model_weights())
    if (n.id != WeightId::Embed) add(n, 0);
  return w;
}

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// tensor name -> the mapped file that holds it
std::map<std::string, std::shared_ptr<SafetensorsFile>> open_shards(const std::string& dir) {
  std::map<std::string, std::shared_ptr<SafetensorsFile>> where;
  const std::string single = dir + "/model.safetensors";
  const std::string index = dir + "/model.safetensors.index.json";
  if (file_exists(single)) {
    auto f = SafetensorsFile::open(single);
    for (const auto& [name, e] : f->entries()) where[name] = f;
    return where;
  }
  if (!file_exists(index))
    throw std::runtime_error(dir + ": no model.safetensors or model.safetensors.index.json");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(index));
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(index + ": not valid JSON: " + e.what());
  }
  if (!j.contains("weight_map") || !j["weight_map"].is_object())
    throw std::runtime_error(index + ": missing object \"weight_map\"");
  std::map<std::string, std::shared_ptr<SafetensorsFile>> files;
  for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
    if (!it.value().is_string()) throw std::runtime_error(index + ": weight_map values must be file names");
    const std::string file = it.value().get<std::string>();
    if (file.find('/') != std::string::npos)
      throw std::runtime_error(index + ": shard name \"" + file + "\" must be a plain file name");
    auto& f = files[file];
    if (!f) f = SafetensorsFile::open(dir + "/" + file);
    if (!f->contains(it.key()))
      throw std::runtime_error(f->path() + ": tensor \"" + it.key() + "\" listed in the index is missing");
    where[it.key()] = f;
  }
  return where;
}

}  // namespace

CheckpointWeights::CheckpointWeights(const std::string& dir, const ModelConfig& c, at::ScalarType dtype,
                                     at::Device device)
    : dir_(dir), dtype_(dtype), device_(device) {
  auto files = open_shards(dir);
  for (const auto& [name, shape] : expected_weights(c)) {
    auto it = files.find(name);
    if (it == files.end()) throw std::runtime_error(dir + ": checkpoint has no tensor \"" + name + "\"");
    const TensorEntry& e = it->second->entries().at(name);
    if (e.shape != shape)
      throw std::runtime_error(it->second->path() + ": tensor \"" + name + "\" has shape " + shape_str(e.shape) +
                               ", config.json implies " + shape_str(shape));
    if (e.dtype != "F32" && e.dtype != "F16" && e.dtype != "BF16" && e.dtype != "F64")
      throw std::runtime_error(it->second->path() + ": tensor \"" + name + "\" has dtype " + e.dtype +
                               " (weights must be F32, F16, BF16 or F64)");
    where_[name] = it->second;
  }
}

CheckpointWeights::~CheckpointWeights() = default;

at::Tensor CheckpointWeights::take(const std::string& name) const {
  auto it = where_.find(name);
  if (it == where_.end()) throw std::runtime_error(dir_ + ": no weight \"" + name + "\" is expected");
  // In the file's dtype on CPU that read is the tensor kept; otherwise it converts once and goes.
  return it->second->read(name).to(device_, dtype_);
}

WeightMap load_weights(const std::string& dir, const ModelConfig& c, at::ScalarType dtype, at::Device device) {
  CheckpointWeights weights(dir, c, dtype, device);
  WeightMap out;
  for (const auto& [name, shape] : expected_weights(c)) out[name] = weights.take(name);
  return out;
}

}  // namespace exspec
