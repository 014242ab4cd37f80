// Tool calls as a grammar (docs/chat-templates.md, tool_choice): the family's call syntax, as
// the chat template writes calls and chat/tool_calls.cpp parses them, around each function's
// parameters schema, so that a call always parses and its arguments fit the schema:
//   hermes       <tool_call>\n{"name": "F", "arguments": ARGS}\n</tool_call>, "\n" between calls
//   llama3_json  {"name": "F", "parameters": ARGS}, "; " between calls
//   deepseek_v3  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>F\n```json\nARGS\n```
//                <｜tool▁call▁end｜>, "\n" between calls, then <｜tool▁calls▁end｜>
//   mistral      [TOOL_CALLS] [{"name": "F", "arguments": ARGS}, ...] or, where the template
//                writes [ARGS], [TOOL_CALLS]F[ARGS]ARGS per call
// A marker that is a special token of the vocabulary is that token (the engine allows special
// tokens nowhere else); otherwise its text. ARGS is compact JSON (the grammar engine's form).
// Torch-free.
#pragma once
#include <optional>
#include <string>

#include "grammar/grammar_cache.h"
#include "http/chat_request.h"
#include "http/structured_request.h"
#include "chat/tool_calls.h"

namespace exspec {
class Tokenizer;
}

namespace exspec::http {

struct ToolSyntax {
  chat::ToolFormat format = chat::ToolFormat::None;
  bool mistral_args = false;  // mistral: [TOOL_CALLS]F[ARGS]{...} rather than [TOOL_CALLS] [{...}]
};

// The calls the answer must be: all tools, one call or (parallel) one or more ("required"), or
// exactly one call of the named function. Throws ApiError 400 naming tools[i].function.parameters
// for a parameters schema that is not an object's, or over limits.max_grammar_bytes.
grammar::GrammarRequest tool_calls_grammar(const ChatTools& tools, const ToolSyntax& syntax, const Tokenizer& tok,
                                           const Limits& limits);

// The answer's grammar for tools and an output constraint, or none: "required" / a named function
// give the calls (with a constraint too: 400 naming tool_choice); "auto" with a constraint, the
// constrained content or calls; otherwise the constraint alone. Its sources name each tool's
// parameters (tools[i].function.parameters) and the constraint's field.
std::optional<OutputConstraint> answer_constraint(const ChatTools& tools, const ToolSyntax& syntax,
                                                  std::optional<OutputConstraint> output, const Tokenizer* tok,
                                                  const Limits& limits);

}  // namespace exspec::http
