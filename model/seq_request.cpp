#include "model/seq_request.h"

#include <stdexcept>
#include <string>

#include "model/model_config.h"

namespace exspec {

void validate_request(const ModelConfig& c, const SeqRequest& r) {
  if (r.prompt.empty()) throw std::invalid_argument("prompt is empty");
  if (r.max_tokens < 0) throw std::invalid_argument("max_tokens must be >= 0");
  for (int64_t id : r.prompt)
    if (id < 0 || id >= c.vocab_size)
      throw std::invalid_argument("prompt token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                  std::to_string(c.vocab_size) + ")");
  const SamplingParams& s = r.sampling;
  if (!(s.temperature >= 0)) throw std::invalid_argument("temperature must be >= 0");
  if (!(s.top_p >= 0 && s.top_p <= 1)) throw std::invalid_argument("top_p must be in [0, 1]");  // 0: the most likely token
  if (s.top_k < 0) throw std::invalid_argument("top_k must be >= 0");
  if (!(s.min_p >= 0 && s.min_p <= 1)) throw std::invalid_argument("min_p must be in [0, 1]");
  if (!(s.repetition_penalty > 0)) throw std::invalid_argument("repetition_penalty must be > 0");
  if (s.min_tokens < 0 || s.min_tokens > r.max_tokens)
    throw std::invalid_argument("min_tokens must be in [0, max_tokens]");
  // Where the grammar may only end, min_tokens would leave no token allowed.
  if (r.grammar && s.masks_stops()) throw std::invalid_argument("min_tokens cannot be combined with a grammar");
  for (const auto& [id, bias] : s.logit_bias)
    if (id < 0 || id >= c.vocab_size) throw std::invalid_argument("logit_bias token id " + std::to_string(id) + " is outside the vocabulary");
  const int64_t total = static_cast<int64_t>(r.prompt.size()) + r.max_tokens;
  if (total > c.max_position_embeddings) {
    const int64_t longer = c.rope_scaling.longer_context();
    throw std::invalid_argument("prompt (" + std::to_string(r.prompt.size()) + " tokens) + max_tokens (" +
                                std::to_string(r.max_tokens) + ") exceeds the model's context of " +
                                std::to_string(c.max_position_embeddings) + " tokens" +
                                (longer > c.max_position_embeddings
                                     ? " (its longrope short factors' context; the server's --longrope long serves up to " +
                                           std::to_string(longer) + ")"
                                     : ""));
  }
}

}  // namespace exspec
