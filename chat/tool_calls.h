// Tool calls in a model's answer, per family: Hermes / Qwen (<tool_call>{json}</tool_call>),
// Llama 3.x JSON ({"name", "parameters"}, after <|python_tag|> or alone), DeepSeek V3
// (<｜tool▁calls▁begin｜>...), Mistral ([TOOL_CALLS] [...] or [TOOL_CALLS]name[ARGS]{...}). Pure
// functions: text in, content and calls out. Torch-free.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace exspec::chat {

enum class ToolFormat { None, Hermes, Llama3Json, DeepSeekV3, Mistral };

const char* tool_format_name(ToolFormat f);  // hermes, llama3_json, deepseek_v3, mistral, none
std::optional<ToolFormat> tool_format_named(const std::string& name);
// The family a chat template's text writes tool calls in (None: it has no tool syntax we know).
ToolFormat tool_format_of_template(const std::string& template_text);

struct ToolCall {
  std::string name;
  std::string arguments;  // a JSON object, as text
};

struct ParsedOutput {
  std::string content;  // the text outside the calls
  std::vector<ToolCall> calls;
};

// The answer split into content and calls. Text that does not parse as the family's calls stays
// content, whole (a malformed call is the model's text, not an error).
ParsedOutput parse_tool_calls(ToolFormat f, const std::string& text);

// Where a call may begin in streamed text: the offset of the family's opening marker, or of a
// prefix of it at the end of `text` (std::string::npos: nowhere). Streaming sends the text
// before it as content and holds the rest until the answer ends.
size_t tool_call_start(ToolFormat f, const std::string& text);

}  // namespace exspec::chat
