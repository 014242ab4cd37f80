// config.json's rope_scaling (ModelConfig::rope_scaling), and which set of longrope factors a
// load serves.
#include <algorithm>
#include <cmath>

#include "model/config_json.h"
#include "model/model_config.h"

namespace exspec {

using nlohmann::json;
using namespace config_json;

namespace {

// HF's _compute_longrope_parameters: the factors as float32 (torch.tensor(..., float32)), and the
// attention factor from max_position_embeddings / original where the config has an original (at
// the top, in rope_scaling, or by its class's default: Phi3Config's), else from `factor`.
std::vector<double> float32_factors(const json& r, const char* key, const std::string& sub) {
  auto it = r.find(key);
  if (it == r.end() || !it->is_array() || it->empty()) fail(sub, std::string("longrope needs a list \"") + key + "\"");
  std::vector<double> out;
  for (const json& v : *it) {
    if (!v.is_number() || !(v.get<double>() > 0)) fail(sub, std::string("\"") + key + "\" must hold positive numbers");
    out.push_back(static_cast<float>(v.get<double>()));
  }
  return out;
}

void parse_longrope(const json& j, const json& r, int64_t original_default, RopeScaling& rs, const std::string& sub) {
  rs.short_factors = float32_factors(r, "short_factor", sub);
  rs.long_factors = float32_factors(r, "long_factor", sub);
  const int64_t max_pos = need_int(j, "max_position_embeddings", sub);
  const char* key = "original_max_position_embeddings";
  const bool top = j.contains(key) && !j[key].is_null(), own = r.contains(key) && !r[key].is_null();
  rs.original_max_position_embeddings = top ? need_int(j, key, sub) : own ? need_int(r, key, sub) : original_default;
  if (rs.original_max_position_embeddings > 0) {
    rs.factor = static_cast<double>(max_pos) / static_cast<double>(rs.original_max_position_embeddings);
  } else {
    rs.original_max_position_embeddings = max_pos;
    rs.factor = get_double(r, "factor", 1.0, sub);
  }
  rs.attention_factor = r.contains("attention_factor") && !r["attention_factor"].is_null()
                            ? get_double(r, "attention_factor", 1.0, sub)
                            : longrope_attention_factor(rs.factor, rs.original_max_position_embeddings);
  if (!(rs.attention_factor > 0)) fail(sub, "longrope's attention_factor must be positive");
}

}  // namespace

RopeScaling parse_rope_scaling(const json& j, const ArchitectureRow& row, const std::string& where) {
  RopeScaling rs;
  auto it = j.find("rope_scaling");
  if (it == j.end() || it->is_null()) return rs;
  if (!it->is_object()) fail(where, "field \"rope_scaling\" must be an object or null");
  const json& r = *it;
  std::string type = r.value("rope_type", r.value("type", std::string("default")));
  const std::string sub = where + " rope_scaling";
  if (type == "default") return rs;
  rs.type = type;
  if (type == "linear") {
    rs.factor = get_double(r, "factor", 0.0, sub);
    if (rs.factor <= 0) fail(sub, "linear scaling needs a positive \"factor\"");
  } else if (type == "llama3") {
    for (const char* k : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
      if (!r.contains(k)) fail(sub, std::string("llama3 scaling needs \"") + k + "\"");
    rs.factor = get_double(r, "factor", 0, sub);
    rs.low_freq_factor = get_double(r, "low_freq_factor", 0, sub);
    rs.high_freq_factor = get_double(r, "high_freq_factor", 0, sub);
    rs.original_max_position_embeddings = need_int(r, "original_max_position_embeddings", sub);
    if (rs.factor <= 0 || rs.low_freq_factor <= 0 || rs.high_freq_factor <= rs.low_freq_factor)
      fail(sub, "llama3 scaling needs factor > 0 and high_freq_factor > low_freq_factor > 0");
  } else if (type == "longrope" || type == "su") {  // "su": Phi-3's first name for it
    rs.type = "longrope";
    parse_longrope(j, r, row.longrope_original_default, rs, sub);
  } else {
    fail(sub, "unsupported rope_type \"" + type + "\" (supported: default, linear, llama3, longrope)");
  }
  return rs;
}

void rope_scaling_json(const ModelConfig& c, json& j) {
  const RopeScaling& rs = c.rope_scaling;
  if (rs.type == "default") {
    j["rope_scaling"] = nullptr;
  } else {
    json r{{"rope_type", rs.type}, {"factor", rs.factor}};
    if (rs.type == "longrope") {  // Phi3Config: the original at the top, the factor implied
      r = json{{"rope_type", "longrope"}, {"short_factor", rs.short_factors}, {"long_factor", rs.long_factors}};
      j["original_max_position_embeddings"] = rs.original_max_position_embeddings;
      const double implied = static_cast<double>(c.max_position_embeddings) / rs.original_max_position_embeddings;
      if (rs.attention_factor != longrope_attention_factor(implied, rs.original_max_position_embeddings))
        r["attention_factor"] = rs.attention_factor;
    }
    if (rs.type == "llama3") {
      r["low_freq_factor"] = rs.low_freq_factor;
      r["high_freq_factor"] = rs.high_freq_factor;
      r["original_max_position_embeddings"] = rs.original_max_position_embeddings;
    }
    j["rope_scaling"] = r;
  }
}

double longrope_attention_factor(double factor, int64_t original) {
  return factor <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(factor) / std::log(static_cast<double>(original)));
}

ModelConfig choose_longrope(ModelConfig c, bool long_context) {
  RopeScaling& rs = c.rope_scaling;
  if (rs.type != "longrope") return c;
  rs.long_context = long_context;
  rs.factors = long_context ? rs.long_factors : rs.short_factors;
  // Short: every sequence it serves is one HF runs on the short factors too.
  rs.long_positions = c.max_position_embeddings;
  if (!long_context) c.max_position_embeddings = std::min(c.max_position_embeddings, rs.original_max_position_embeddings);
  return c;
}

}  // namespace exspec
