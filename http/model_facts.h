// What request validation knows about the served model (http/openai_request.h, and the parts of a
// request parsed apart from it: http/prediction_request.h). Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "config/settings.h"
#include "model/generation_defaults.h"

namespace exspec {
class Tokenizer;
}

namespace exspec::grammar {
class GrammarService;
}  // namespace exspec::grammar

namespace exspec::http {


// What validation needs to know about the served model.
struct ModelFacts {
  const Tokenizer* tokenizer = nullptr;  // null: token-id prompts only
  const chat::ChatTemplate* chat = nullptr;    // null: chat_error says why
  std::string chat_error;
  int64_t context = 0;  // max_position_embeddings
  // A longrope model on its short factors: the context --longrope long would give (0: none), said
  // in context errors.
  int64_t longrope_positions = 0;
  int64_t vocab = 0;
  std::vector<std::string> model_names;  // names a request's "model" may use
  Limits limits;
  // Special tokens written in a prompt's text are read as text, not as those tokens (the
  // server's default; a request's "split_special_tokens" overrides it).
  bool split_special_tokens = false;
  grammar::GrammarService* grammars = nullptr;  // the model's compiled grammars; null: no tokenizer.json
  // The checkpoint's recommended sampling (generation_config.json, --generation-config auto):
  // the defaults of the fields a request leaves out, max_tokens included.
  GenerationDefaults defaults;
  // Leave the grammar in GenRequest::pending_grammar (else it is compiled while parsing).
  bool defer_grammar = false;
};

// A JSON array of token ids, each an integer inside the vocabulary; a 400 naming `param` for
// anything else ("<what> must hold integers", "token id N is outside the vocabulary").
std::vector<int64_t> token_ids(const nlohmann::ordered_json& arr, const ModelFacts& m, const std::string& param,
                               const std::string& what);

}  // namespace exspec::http
