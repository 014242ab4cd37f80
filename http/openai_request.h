// OpenAI request bodies (/v1/completions, /v1/chat/completions) parsed and validated into what
// the engine runs. Every rejection is an ApiError naming the field. Torch-free.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "chat/tool_calls.h"
#include "http/model_facts.h"
#include "http/sampling_request.h"
#include "config/settings.h"

namespace exspec {
class Tokenizer;
namespace grammar {
class CompiledGrammar;
}
}

namespace exspec::grammar {
class GrammarService;
}  // namespace exspec::grammar

namespace exspec::http {

struct OutputConstraint;

struct PromptIn {
  std::vector<int64_t> ids;
  std::string text;      // the prompt as given (string prompts) or decoded (token ids): for echo
  bool from_ids = false;
};

struct GenRequest {
  bool chat = false;
  std::vector<PromptIn> prompts;  // n choices each (choice index = prompt * n + j)
  SamplingRequest sampling;
  int64_t max_tokens = 16;
  std::vector<std::string> stop;
  std::vector<int64_t> extra_eos;  // the chat template's end-of-turn token
  bool stream = false, include_usage = false, echo = false, return_token_ids = false;
  // stream_options.include_origin: each chunk says where its tokens came from (drafts, target,
  // grammar), the last one the choice's speculation figures (docs/serving.md). Off: chunks as OpenAI's.
  bool include_origin = false;
  // vLLM's extensions: EOS does not stop (ignore_eos); these ids do (stop_token_ids); neither
  // they, EOS nor stop strings before min_tokens tokens; the stop string kept in the text; special
  // tokens kept in the text (skip_special_tokens false).
  bool ignore_eos = false, include_stop_str_in_output = false, skip_special_tokens = true;
  std::vector<int64_t> stop_token_ids;
  int64_t min_tokens = 0;
  std::vector<int64_t> prediction;  // Predicted Outputs (http/prediction_request.h), every choice
  // What every choice's output must match (http/structured_request.h; tool_choice "required" or a
  // named function: http/tool_grammar.h); null: free text.
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
  // The constraint still to compile (ModelFacts::defer_grammar): the endpoint compiles it on the
  // grammar pool, so that its client's connection can cancel the compile.
  std::shared_ptr<const OutputConstraint> pending_grammar;
  // Chat with tools (tool_choice auto): the answer's calls are parsed in this family's syntax into
  // message.tool_calls (None: the answer is all content).
  chat::ToolFormat tool_format = chat::ToolFormat::None;
  bool parallel_tool_calls = true;  // false: the first call only
  // Set by the Anthropic front door only: the finish chunk and each choice carry "stop_reason", the
  // stop string that ended the text or null (as vLLM's field), for its "stop_sequence".
  bool report_stop = false;
  int64_t created = 0;  // unix seconds: the response's "created", and the instant strftime_now formats
};

GenRequest parse_completion_request(const nlohmann::ordered_json& body, const ModelFacts& m);
GenRequest parse_chat_request(const nlohmann::ordered_json& body, const ModelFacts& m);

// The conversation through the chat template, and its ids (the rendered text's special tokens
// read as such, no BOS added: the template writes it, as apply_chat_template tokenizes).
PromptIn chat_prompt(const chat::ChatInput& in, const ModelFacts& m);
// A request's "split_special_tokens", else the server's default.
bool split_special_tokens(const nlohmann::ordered_json& body, const ModelFacts& m);
// Unix seconds now: a request's created time.
int64_t unix_now();
// A known "model" or none (the server serves one); 404 model_not_found otherwise.
void check_model(const nlohmann::ordered_json& body, const ModelFacts& m);

}  // namespace exspec::http
