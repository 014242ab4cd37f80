// What a request constrains its output to (docs/structured-output.md): OpenAI's response_format
// (json_object, json_schema), vLLM's structured_outputs object (json, regex, choice, grammar,
// json_object) or its older guided_json / guided_regex / guided_choice / guided_grammar fields;
// at most one of them. Both endpoints, batch lines too. Torch-free.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/settings.h"
#include "grammar/error.h"
#include "grammar/grammar_cache.h"
#include "http/api_error.h"

namespace exspec::grammar {
class GrammarService;
}  // namespace exspec::grammar

namespace exspec::http {


struct OutputConstraint {
  grammar::GrammarRequest grammar;
  std::string param;  // the field it came from, which errors name: "response_format.json_schema.schema"
  // A composed grammar's parts and the fields they came from (tools[i].function.parameters): a
  // compile error names the first part that fails alone.
  std::vector<std::pair<std::string, grammar::GrammarRequest>> sources;
};

// None when the output is free text. Throws ApiError 400 naming the field: wrong shapes and
// types, unknown or unsupported fields, two constraints at once, a schema / regex / grammar /
// choice list over limits.max_grammar_bytes.
std::optional<OutputConstraint> parse_output_constraint(const nlohmann::ordered_json& body, const Limits& limits);

// The request fields parse_output_constraint reads (each endpoint accepts them).
extern const char* const kOutputConstraintFields[];

// A GrammarError as the 400 a client gets: param names the field, the message the keyword or
// construct and where it is (JSON pointer, offset, line and column).
ApiError grammar_error(const std::string& param, const grammar::GrammarError& e);

// The compiled grammar of `c` (the served model's cache), compiled on its pool within the
// compile budget while the caller waits; a GrammarError is grammar_error of the part it came
// from, a compile over budget a 400 saying so, a full pool a 429, a stopping server a 503. No
// service (a model without tokenizer.json): a 400 saying structured output needs one.
std::shared_ptr<const grammar::CompiledGrammar> compile_grammar(grammar::GrammarService* service, const OutputConstraint& c);

// The same without waiting: `done` runs once, on a pool thread (at once on this one when the pool
// refuses it), with the grammar or the error the client gets. Setting the returned flag cancels
// the compile (the client went away); `done` then gets a 503 that nobody needs to read.
struct CompileOutcome {
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
  std::optional<ApiError> error;
};
std::shared_ptr<std::atomic<bool>> compile_grammar_async(grammar::GrammarService* service, std::shared_ptr<const OutputConstraint> c,
                                                         std::function<void(CompileOutcome)> done);

}  // namespace exspec::http
