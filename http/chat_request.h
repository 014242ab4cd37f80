// The chat-specific fields of a request: "messages" (incl. assistant tool_calls and role "tool"
// results), "tools", "tool_choice", "parallel_tool_calls", "chat_template_kwargs", validated into
// what the chat template is given. Every rejection is a 400 naming the field. Torch-free.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "config/settings.h"

namespace exspec::http {

enum class ToolChoice { None, Auto, Required, Named };

struct ChatTools {
  nlohmann::ordered_json tools;  // null: none; else [{"type": "function", "function": {name, description, parameters}}]
  ToolChoice choice = ToolChoice::None;
  std::string named;  // the function tool_choice names (Named)
  bool parallel = true;
};

// "messages" as apply_chat_template takes them: developer is system; text parts joined; a tool
// call's arguments (a JSON string) as the object they hold, as vLLM passes them.
nlohmann::ordered_json parse_chat_messages(const nlohmann::ordered_json& body, const Limits& limits);
ChatTools parse_chat_tools(const nlohmann::ordered_json& body);
// "chat_template_kwargs": extra template variables (vLLM's extension, e.g. enable_thinking).
nlohmann::ordered_json parse_template_kwargs(const nlohmann::ordered_json& body);

// An OpenAI function name: 1 to 64 of a-z, A-Z, 0-9, _ and - (tools, response_format's name).
bool valid_function_name(const std::string& name);

}  // namespace exspec::http
