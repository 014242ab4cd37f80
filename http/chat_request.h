// The chat-specific fields of a request: "messages" (incl. assistant tool_calls and role "tool"
// results), "tools", "tool_choice", "parallel_tool_calls", "chat_template_kwargs", validated into
// what the chat template is given. Every rejection is a 400 naming the field. Torch-free.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "http/chat_template.h"
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
nlohmann::ordered_json parse_chat_messages(const nlohmann::json& body, const Limits& limits);
ChatTools parse_chat_tools(const nlohmann::json& body);
// "chat_template_kwargs": extra template variables (vLLM's extension, e.g. enable_thinking).
nlohmann::ordered_json parse_template_kwargs(const nlohmann::json& body);

// The seam for tool_choice "required" and a named function: they will constrain the answer to a
// call (the family's call syntax around the function's parameters schema) through the structured-
// output engine. Until that engine is part of the server they are refused with a 400 that says so.
void require_tool_call(const ChatTools& tools, ToolFormat format);

}  // namespace exspec::http
