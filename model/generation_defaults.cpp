#include "model/generation_defaults.h"

#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/gguf/gguf_file.h"
#include "model/gguf_config.h"
#include "model/io_util.h"

namespace exspec {
namespace {

using nlohmann::json;

std::string number(double d) {  // 0, 2, -2: as a person writes the bounds
  std::ostringstream s;
  s << d;
  return s.str();
}

std::optional<double> real(const json& g, const char* key, double lo, double hi, bool open_lo, const std::string& where) {
  auto it = g.find(key);
  if (it == g.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) throw std::runtime_error(where + ": field \"" + key + "\" must be a number");
  const double v = it->get<double>();
  if (!(open_lo ? v > lo : v >= lo) || !(v <= hi))
    throw std::runtime_error(where + ": field \"" + key + "\" is " + it->dump() + "; a request may send it only in " +
                             (open_lo ? "(" : "[") + number(lo) + ", " + number(hi) + "]");
  return v;
}

std::optional<int64_t> integer(const json& g, const char* key, int64_t lo, const std::string& where) {
  auto it = g.find(key);
  if (it == g.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) throw std::runtime_error(where + ": field \"" + key + "\" must be an integer");
  const int64_t v = it->get<int64_t>();
  if (v < lo) throw std::runtime_error(where + ": field \"" + key + "\" must be >= " + std::to_string(lo));
  return v;
}

// The fields set, in a fixed order, as (name, JSON value).
json fields(const GenerationDefaults& d) {
  json j = json::object();
  auto put = [&j](const char* name, const auto& v) {
    if (v) j[name] = *v;
  };
  put("temperature", d.temperature);
  put("top_p", d.top_p);
  put("top_k", d.top_k);
  put("min_p", d.min_p);
  put("repetition_penalty", d.repetition_penalty);
  put("presence_penalty", d.presence_penalty);
  put("frequency_penalty", d.frequency_penalty);
  put("max_tokens", d.max_new_tokens);
  return j;
}

}  // namespace

std::string GenerationDefaults::describe() const {
  if (empty()) return "none";
  // In the order a reader expects, not nlohmann's alphabetical one.
  std::ostringstream s;
  const char* order[] = {"temperature", "top_p", "top_k", "min_p", "repetition_penalty", "presence_penalty",
                         "frequency_penalty", "max_tokens"};
  const json j = fields(*this);
  const char* sep = "";
  for (const char* k : order)
    if (j.contains(k)) {
      s << sep << (std::string(k) == "max_tokens" ? "max_new_tokens" : k) << " " << j[k].dump();
      sep = ", ";
    }
  return s.str();
}

std::string GenerationDefaults::to_json_text() const { return fields(*this).dump(); }

namespace {

// The same bounds whichever file the fields come from; `where` names it in errors.
GenerationDefaults from_json(const json& g, const std::string& where) {
  if (!g.is_object()) throw std::runtime_error(where + ": must be a JSON object");
  GenerationDefaults d;
  d.temperature = real(g, "temperature", 0, 2, false, where);
  d.top_p = real(g, "top_p", 0, 1, false, where);
  d.min_p = real(g, "min_p", 0, 1, false, where);
  d.repetition_penalty = real(g, "repetition_penalty", 0, 2, true, where);
  d.presence_penalty = real(g, "presence_penalty", -2, 2, false, where);
  d.frequency_penalty = real(g, "frequency_penalty", -2, 2, false, where);
  d.top_k = integer(g, "top_k", -1, where);
  if (d.top_k && *d.top_k < 0) d.top_k = 0;  // -1: no top-k, as a request's -1
  d.max_new_tokens = integer(g, "max_new_tokens", 1, where);
  return d;
}

// llama.cpp's general.sampling.* keys (gguf-py's add_sampling_*), as generation_config.json's
// names; the float32 values as the decimals they were written from (0.95, not 0.949999988).
json gguf_sampling(const gguf::GgufFile& f) {
  json g = json::object();
  const std::pair<const char*, const char*> reals[] = {
      {"general.sampling.temp", "temperature"}, {"general.sampling.top_p", "top_p"},
      {"general.sampling.min_p", "min_p"}, {"general.sampling.penalty_repeat", "repetition_penalty"}};
  for (const auto& [key, field] : reals)
    if (auto v = f.float_or(key)) g[field] = gguf::shortest_decimal(*v);
  if (auto k = f.int_or("general.sampling.top_k")) g["top_k"] = *k;
  return g;
}

}  // namespace

GenerationDefaults read_generation_defaults(const std::string& model) {
  if (gguf::is_gguf_path(model)) return from_json(gguf_sampling(*gguf::GgufFile::open(model)), model + " (general.sampling.*)");
  const std::string path = model + "/generation_config.json";
  if (!file_exists(path)) return {};
  json g;
  try {
    g = json::parse(read_text_file(path));
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": not valid JSON: " + e.what());
  }
  return from_json(g, path);
}

GenerationDefaults generation_defaults(const std::string& setting, const std::string& model_dir) {
  if (setting == "none") return {};
  if (setting == "auto" || setting.empty()) return read_generation_defaults(model_dir);
  if (!file_exists(setting + "/generation_config.json"))
    throw std::invalid_argument("generation_config (--generation-config): " + setting +
                                " is neither auto, none nor a directory holding a generation_config.json");
  return read_generation_defaults(setting);
}

}  // namespace exspec
