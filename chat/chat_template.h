// The chat template a server renders: the checkpoint's own Jinja program (tokenizer_config.json's
// chat_template, a string or named templates incl. "tool_use"; or chat_template.jinja), or the
// file --chat-template names, run by chat/jinja as transformers' apply_chat_template runs it.
// A model without one gets ChatML (the template transformers used as its default). Torch-free.
#pragma once
#include <cstdint>
#include <ctime>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/jinja/template.h"
#include "chat/tool_calls.h"

namespace exspec {
class Tokenizer;
}

namespace exspec::chat {

// What apply_chat_template gets: messages (OpenAI's shape: role, content, tool_calls with their
// arguments as objects, tool_call_id), tools (null when none), add_generation_prompt, and a
// request's chat_template_kwargs. `now` is what strftime_now formats.
struct ChatInput {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;  // null: no tools
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
  bool add_generation_prompt = true;
  std::time_t now = 0;
};

// A template that fails on a request's messages: what() is the template's raise_exception message,
// or what failed and on which line. The HTTP edge answers it as a 400 naming "messages" (code
// chat_template_error); chat/ knows nothing of HTTP.
class ChatTemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ChatTemplate {
  std::shared_ptr<const jinja::Template> program;   // "default"
  std::shared_ptr<const jinja::Template> tool_use;  // a named "tool_use" template, used with tools
  std::string source;  // where it came from, for the model card and the log
  nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object();  // bos_token, eos_token ...
  // How the assistant's turn ends, found by rendering a probe conversation: a special token
  // (an extra EOS id for chat requests) or, where the vocabulary has no such token, a stop string.
  std::vector<int64_t> end_ids;
  std::vector<std::string> end_stops;
  ToolFormat tool_format = ToolFormat::None;  // how the model writes tool calls
  // mistral: the template writes [TOOL_CALLS]name[ARGS]{...} (newer Mistral templates), not
  // [TOOL_CALLS] [{"name": ..., "arguments": ...}]: tool_choice "required" constrains to that form.
  bool mistral_args = false;

  // The prompt text. Throws ChatTemplateError: the template's raise_exception message, or what failed.
  std::string render(const ChatInput& in) const;
};

// setting: "auto" (the tokenizer's template; none: ChatML), "chatml", or a template file.
// tool_parser: "auto" (from the template's text) or a ToolFormat name. Throws std::runtime_error
// naming the template's source, line and construct when it cannot be run (refused at start-up).
ChatTemplate load_chat_template(const Tokenizer& tok, const std::string& setting, const std::string& tool_parser);

}  // namespace exspec::chat
