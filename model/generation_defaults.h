// A checkpoint's recommended sampling: the temperature, top_p, ... its authors wrote into
// generation_config.json (Llama 3.1: temperature 0.6, top_p 0.9). Each is the default of a
// request that leaves that field unset, as vLLM's --generation-config auto does. Torch-free.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace exspec {

struct GenerationDefaults {
  std::optional<double> temperature, top_p, min_p, repetition_penalty, presence_penalty, frequency_penalty;
  std::optional<int64_t> top_k, max_new_tokens;  // top_k 0: off; max_new_tokens: a request's max_tokens

  bool empty() const {
    return !temperature && !top_p && !min_p && !repetition_penalty && !presence_penalty && !frequency_penalty &&
           !top_k && !max_new_tokens;
  }
  // "temperature 0.7, top_p 0.9" (the fields set, in the file's terms), or "none".
  std::string describe() const;
  // {"temperature": 0.7, ...}: the fields set, named as a request names them (max_new_tokens as
  // max_tokens).
  std::string to_json_text() const;
};

// The sampling fields of DIR/generation_config.json (none when the file is absent), or of a
// FILE.gguf's general.sampling.* metadata (temp, top_p, top_k, min_p, penalty_repeat). Values outside
// what a request may send (temperature in [0, 2], top_p and min_p in [0, 1], top_k >= -1,
// penalties in [-2, 2], repetition_penalty in (0, 2], max_new_tokens >= 1) throw, naming the file
// and the field. do_sample is not read: as in vLLM, a temperature in the file is used as written.
GenerationDefaults read_generation_defaults(const std::string& model);

// `setting` is the --generation-config value: "auto" reads the model directory's file, "none"
// gives no defaults (the API's own), anything else is a directory holding a generation_config.json.
GenerationDefaults generation_defaults(const std::string& setting, const std::string& model_dir);

}  // namespace exspec
