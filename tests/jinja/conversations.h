// Conversations in the shape apply_chat_template receives them (OpenAI messages, tools as JSON
// schemas): system prompts, multi-turn, tools, assistant tool_calls and role "tool" results.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace exspec::jinjatest {

struct Conversation {
  std::string name;
  nlohmann::ordered_json messages;
  nlohmann::ordered_json tools;  // null: none
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // chat_template_kwargs
};

const std::vector<Conversation>& conversations();
const nlohmann::ordered_json& weather_tools();

}  // namespace exspec::jinjatest
