#include "tests/jinja/conversations.h"

namespace exspec::jinjatest {

using nlohmann::ordered_json;

const ordered_json& weather_tools() {
  static const ordered_json t = ordered_json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.",
      "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "The city, e.g. \"Paris\""},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "description": "Current time (UTC) — no arguments.",
      "parameters": {"type": "object", "properties": {}}}}])");
  return t;
}

const std::vector<Conversation>& conversations() {
  static const std::vector<Conversation> c = [] {
    std::vector<Conversation> v;
    auto add = [&](const char* name, const char* msgs, bool tools = false, const char* extra = "{}") {
      v.push_back({name, ordered_json::parse(msgs), tools ? weather_tools() : ordered_json(nullptr), ordered_json::parse(extra)});
    };
    add("user", R"([{"role": "user", "content": "Hello!"}])");
    add("system+user", R"([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "What is 2+2?"}])");
    add("multi-turn", R"([{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"},
                          {"role": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": "Tell me a joke."}])");
    add("no system, two turns", R"([{"role": "user", "content": "One"}, {"role": "assistant", "content": "Two"},
                                    {"role": "user", "content": "Three"}])");
    add("unicode and spaces", R"([{"role": "user", "content": "  Grüße 🌍 \"quoted\" {{ not jinja }}\n"}])");
    add("text parts", R"([{"role": "user", "content": [{"type": "text", "text": "Part one."}, {"type": "text", "text": " Two"}]}])");
    add("tools offered", R"([{"role": "system", "content": "Use tools."}, {"role": "user", "content": "Weather in Paris?"}])", true);
    add("tools, no system", R"([{"role": "user", "content": "Weather in Paris?"}])", true);
    add("tool round trip (arguments object)", R"([
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21.5, \"sky\": \"clear\"}"}])", true);
    add("tool round trip (arguments string), final answer", R"([
      {"role": "system", "content": "Use tools."},
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "21 C"},
      {"role": "assistant", "content": "It is 21 C in Paris."},
      {"role": "user", "content": "Thanks!"}])", true);
    add("parallel tool calls", R"([
      {"role": "user", "content": "Weather in Paris and the time?"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": {}}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "21 C"},
      {"role": "tool", "tool_call_id": "call_2", "content": "12:00"}])", true);
    add("reasoning in history", R"([
      {"role": "user", "content": "2+2?"},
      {"role": "assistant", "content": "<think>\nadd them\n</think>\n\n4"},
      {"role": "user", "content": "3+3?"}])");
    add("thinking off", R"([{"role": "user", "content": "Hi"}])", false, R"({"enable_thinking": false})");
    add("roles out of order", R"([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])");
    add("system only", R"([{"role": "system", "content": "S"}])");
    return v;
  }();
  return c;
}

}  // namespace exspec::jinjatest
