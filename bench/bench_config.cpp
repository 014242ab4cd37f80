#include "bench/bench_config.h"

#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "actors/scheduler/engine_config.h"

namespace exspec {
using json = nlohmann::ordered_json;

BenchConfig BenchConfig::quick() {
  BenchConfig c;
  c.prompts = 8;
  c.max_tokens = 16;
  c.batch_sizes = {1, 4, 8};
  c.repeats = 1;
  c.windows = {8, 16};
  c.k_values = {1, 5};
  c.f64_prompts = 4;
  c.f64_max_tokens = 8;
  c.f64_batch_sizes = {4};
  c.adaptive_batch_sizes = {1, 8};
  c.adaptive_k_values = {3};
  c.adaptive_prompts = 8;
  c.inplace_batch_sizes = {8};
  c.trained_batch_sizes = {1, 8};
  c.trained_max_tokens = 32;
  return c;
}

void BenchConfig::apply_json(const std::string& text) {
  json j = json::parse(text);
  auto take = [&](const char* k, auto& field) {
    if (j.contains(k)) field = j[k].get<std::decay_t<decltype(field)>>();
  };
  take("model", model), take("draft", draft), take("mixed_prompts", mixed_prompts);
  take("equal_prompts", equal_prompts), take("prompts", prompts), take("max_tokens", max_tokens);
  take("dtype", dtype), take("batch_sizes", batch_sizes), take("draft_tokens", draft_tokens);
  take("repeats", repeats), take("sweep_batch", sweep_batch), take("windows", windows);
  take("k_values", k_values), take("f64_prompts", f64_prompts), take("f64_max_tokens", f64_max_tokens);
  take("f64_batch_sizes", f64_batch_sizes), take("overlap", overlap), take("blas_threads", blas_threads);
  take("torch_threads", torch_threads), take("sweeps", sweeps), take("low_model", low_model);
  take("low_draft", low_draft), take("adaptive_batch_sizes", adaptive_batch_sizes);
  take("adaptive_k_values", adaptive_k_values), take("adaptive_prompts", adaptive_prompts);
  take("adaptive_modes", adaptive_modes);
  take("inplace_batch_sizes", inplace_batch_sizes), take("prefill_chunk", prefill_chunk);
  take("trained_model", trained_model), take("trained_draft", trained_draft);
  take("trained_prompts", trained_prompts), take("trained_batch_sizes", trained_batch_sizes);
  take("trained_max_tokens", trained_max_tokens);
  for (const std::string& m : adaptive_modes)
    if (parse_mode(m) == Mode::NonSpec) throw std::invalid_argument("adaptive_modes: \"" + m + "\" has no draft length to adapt");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!json::parse(to_json()).contains(it.key())) throw std::invalid_argument("unknown bench config key \"" + it.key() + "\"");
}

std::string BenchConfig::to_json() const {
  json j{{"model", model},           {"draft", draft},
         {"mixed_prompts", mixed_prompts}, {"equal_prompts", equal_prompts},
         {"prompts", prompts},       {"max_tokens", max_tokens},
         {"dtype", dtype},           {"batch_sizes", batch_sizes},
         {"draft_tokens", draft_tokens}, {"repeats", repeats},
         {"sweep_batch", sweep_batch}, {"windows", windows},
         {"k_values", k_values},     {"f64_prompts", f64_prompts},
         {"f64_max_tokens", f64_max_tokens}, {"f64_batch_sizes", f64_batch_sizes},
         {"overlap", overlap},       {"blas_threads", blas_threads},
         {"torch_threads", torch_threads}, {"sweeps", sweeps},
         {"low_model", low_model},   {"low_draft", low_draft},
         {"adaptive_batch_sizes", adaptive_batch_sizes}, {"adaptive_k_values", adaptive_k_values},
         {"adaptive_prompts", adaptive_prompts}, {"adaptive_modes", adaptive_modes},
         {"inplace_batch_sizes", inplace_batch_sizes},
         {"prefill_chunk", prefill_chunk},
         {"trained_model", trained_model}, {"trained_draft", trained_draft},
         {"trained_prompts", trained_prompts}, {"trained_batch_sizes", trained_batch_sizes},
         {"trained_max_tokens", trained_max_tokens}};
  return j.dump(2);
}

}  // namespace exspec
