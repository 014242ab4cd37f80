// What a sequence asks for and what it got: shared by every decoding mode.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/sampling_params.h"

namespace exspec {

struct ModelConfig;

namespace grammar {
class CompiledGrammar;  // grammar/compiled_grammar.h (torch-free)
}

enum class FinishReason { None, Stop, Length };
inline const char* to_string(FinishReason r) {
  return r == FinishReason::Stop ? "stop" : r == FinishReason::Length ? "length" : "none";
}

struct SeqRequest {
  std::vector<int64_t> prompt;
  int64_t max_tokens = 16;
  std::vector<int64_t> eos_ids;  // generation stops right after any of these (it is kept)
  SamplingParams sampling;       // default: greedy
  bool model_eos = true;         // the engine fills empty eos_ids with the model's (false: as given)
  // Predicted Outputs: the tokens the client expects. Proposed as drafts (actors/scheduler/proposer.h) and
  // verified like any: they change how fast the output comes, never what it is.
  std::vector<int64_t> prediction;
  // >= 0: the target's logprob of each prompt token after its prefix too, with this many of the
  // most likely tokens (echo with logprobs), from the prefill that stores the prompt.
  int64_t prompt_logprobs = -1;
  // Whether it asks for prompt logprobs and its prompt has tokens to score (all but the first).
  bool scores_prompt() const { return prompt_logprobs >= 0 && prompt.size() > 1; }
  // Structured output (grammar/README.md): every generated token keeps the text inside this
  // grammar; the engine keeps one grammar::Matcher per sequence over it. null: free text. The
  // choices of one request (n > 1) share it. Its end tokens are the model's EOS and the chat
  // template's end of turn (grammar/grammar_service.h).
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
};

// vLLM's stop rules: the model's EOS ids (none with ignore_eos) and stop_token_ids end the
// sequence; min_tokens masks all of them until that many tokens are generated.
inline void set_stop_rules(SeqRequest& r, std::vector<int64_t> model_eos, bool ignore_eos,
                           const std::vector<int64_t>& stop_token_ids, int64_t min_tokens) {
  r.eos_ids = ignore_eos ? std::vector<int64_t>{} : std::move(model_eos);
  r.eos_ids.insert(r.eos_ids.end(), stop_token_ids.begin(), stop_token_ids.end());
  r.model_eos = false;
  r.sampling.min_tokens = min_tokens;
  r.sampling.min_tokens_masked = r.eos_ids;
}

struct SeqResult {
  std::vector<int64_t> tokens;  // generated ids only, the EOS that stopped it included
  FinishReason finish = FinishReason::None;
  std::string error;  // set when the engine failed this sequence (finish stays None)
  std::vector<TokenLogprob> logprobs;  // one per token when sampling.logprobs >= 0
  int64_t drafted = 0, accepted = 0;   // draft tokens verified for it, and those accepted
};

// Whether `token` is one of the grammar's end tokens (model/constrained.h).
bool grammar_end_token(const grammar::CompiledGrammar& g, int64_t token);

// True when `token`, just generated as the n-th token, ends the sequence: one of its stop ids,
// the end of its grammar (after which nothing is allowed), or max_tokens.
inline FinishReason finish_after(const SeqRequest& r, int64_t token, int64_t n_generated) {
  for (int64_t e : r.eos_ids)
    if (token == e) return FinishReason::Stop;
  if (r.grammar && grammar_end_token(*r.grammar, token)) return FinishReason::Stop;
  return n_generated >= r.max_tokens ? FinishReason::Length : FinishReason::None;
}

// Throws std::invalid_argument when a request cannot be served by a model of this config (empty
// prompt, ids out of the vocabulary, prompt + max_tokens beyond max_position_embeddings,
// sampling parameters out of range).
void validate_request(const ModelConfig& model, const SeqRequest& r);

}  // namespace exspec
