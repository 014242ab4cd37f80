#include "chat/tool_calls.h"

#include <nlohmann/json.hpp>

namespace exspec::chat {
namespace {

using nlohmann::ordered_json;

const std::string kHermesOpen = "<tool_call>", kHermesClose = "</tool_call>";
const std::string kPythonTag = "<|python_tag|>";
const std::string kDsBegin = "<｜tool▁calls▁begin｜>", kDsCall = "<｜tool▁call▁begin｜>", kDsSep = "<｜tool▁sep｜>",
                  kDsCallEnd = "<｜tool▁call▁end｜>";
const std::string kMistral = "[TOOL_CALLS]", kMistralArgs = "[ARGS]";

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string rtrim(const std::string& s) {
  const size_t e = s.find_last_not_of(" \t\r\n");
  return e == std::string::npos ? "" : s.substr(0, e + 1);
}

std::optional<ordered_json> json_of(const std::string& s) {
  try {
    return ordered_json::parse(s);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

// {"name": ..., "arguments" | "parameters": {...} or "{...}"} as a call.
std::optional<ToolCall> call_of(const ordered_json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return std::nullopt;
  const ordered_json* args = nullptr;
  for (const char* k : {"arguments", "parameters"})
    if (j.contains(k)) args = &j[k];
  ToolCall c{j["name"].get<std::string>(), "{}"};
  if (args && args->is_string()) c.arguments = args->get<std::string>();
  else if (args && args->is_object()) c.arguments = args->dump();
  else if (args && !args->is_null()) return std::nullopt;
  return c;
}

// Where the JSON value starting at `from` ends (matching brackets outside strings); npos if open.
size_t json_end(const std::string& s, size_t from) {
  int depth = 0;
  bool in_str = false;
  for (size_t i = from; i < s.size(); ++i) {
    const char c = s[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == '"') in_str = false;
    } else if (c == '"') {
      in_str = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string::npos;
}

ParsedOutput hermes(const std::string& text) {
  ParsedOutput out{text, {}};
  size_t at = text.find(kHermesOpen);
  if (at == std::string::npos) return out;
  std::vector<ToolCall> calls;
  for (size_t pos = at; pos != std::string::npos; pos = text.find(kHermesOpen, pos)) {
    const size_t body = pos + kHermesOpen.size();
    const size_t close = text.find(kHermesClose, body);
    const auto j = json_of(trim(text.substr(body, close == std::string::npos ? std::string::npos : close - body)));
    const auto c = j ? call_of(*j) : std::nullopt;
    if (!c) return out;
    calls.push_back(*c);
    if (close == std::string::npos) break;
    pos = close + kHermesClose.size();
  }
  return ParsedOutput{rtrim(text.substr(0, at)), std::move(calls)};
}

ParsedOutput llama3_json(const std::string& text) {
  ParsedOutput out{text, {}};
  std::string rest = trim(text);
  if (rest.compare(0, kPythonTag.size(), kPythonTag) == 0) rest = trim(rest.substr(kPythonTag.size()));
  if (rest.empty() || rest[0] != '{') return out;
  std::vector<ToolCall> calls;
  size_t pos = 0;
  while (pos < rest.size()) {
    const size_t end = json_end(rest, pos);
    if (end == std::string::npos) return out;
    const auto j = json_of(rest.substr(pos, end - pos));
    const auto c = j ? call_of(*j) : std::nullopt;
    if (!c) return out;
    calls.push_back(*c);
    pos = rest.find_first_not_of(" \t\r\n;", end);
    if (pos != std::string::npos && rest[pos] != '{') return out;
  }
  return ParsedOutput{"", std::move(calls)};
}

ParsedOutput deepseek_v3(const std::string& text) {
  ParsedOutput out{text, {}};
  const size_t begin = text.find(kDsBegin);
  if (begin == std::string::npos) return out;
  std::vector<ToolCall> calls;
  for (size_t pos = text.find(kDsCall, begin); pos != std::string::npos; pos = text.find(kDsCall, pos)) {
    const size_t sep = text.find(kDsSep, pos);
    if (sep == std::string::npos) return out;
    const size_t name_at = sep + kDsSep.size();
    const size_t nl = text.find('\n', name_at);
    if (nl == std::string::npos) return out;
    const size_t open = text.find("```json", nl);
    const size_t close = open == std::string::npos ? open : text.find("```", open + 7);
    if (close == std::string::npos) return out;
    const auto args = json_of(trim(text.substr(open + 7, close - open - 7)));
    if (!args || !args->is_object()) return out;
    calls.push_back(ToolCall{trim(text.substr(name_at, nl - name_at)), args->dump()});
    pos = close;
  }
  if (calls.empty()) return out;
  return ParsedOutput{rtrim(text.substr(0, begin)), std::move(calls)};
}

ParsedOutput mistral(const std::string& text) {
  ParsedOutput out{text, {}};
  const size_t at = text.find(kMistral);
  if (at == std::string::npos) return out;
  std::vector<ToolCall> calls;
  for (size_t pos = at; pos != std::string::npos; pos = text.find(kMistral, pos)) {
    const size_t body = text.find_first_not_of(" \t\r\n", pos + kMistral.size());
    if (body == std::string::npos) return out;
    if (text[body] == '[') {  // [TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]
      const size_t end = json_end(text, body);
      const auto j = end == std::string::npos ? std::nullopt : json_of(text.substr(body, end - body));
      if (!j || !j->is_array()) return out;
      for (const auto& e : *j) {
        const auto c = call_of(e);
        if (!c) return out;
        calls.push_back(*c);
      }
      pos = end;
    } else {  // [TOOL_CALLS]name[ARGS]{...}
      const size_t args = text.find(kMistralArgs, body);
      if (args == std::string::npos) return out;
      const size_t start = args + kMistralArgs.size();
      const size_t end = json_end(text, text.find_first_not_of(" \t\r\n", start));
      const auto j = end == std::string::npos ? std::nullopt : json_of(text.substr(start, end - start));
      if (!j || !j->is_object()) return out;
      calls.push_back(ToolCall{trim(text.substr(body, args - body)), j->dump()});
      pos = end;
    }
  }
  return ParsedOutput{rtrim(text.substr(0, at)), std::move(calls)};
}

// The offset of `marker` in text, or of a proper prefix of it that ends the text.
size_t marker_start(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at != std::string::npos) return at;
  for (size_t k = std::min(marker.size() - 1, text.size()); k > 0; --k)
    if (text.compare(text.size() - k, k, marker, 0, k) == 0) return text.size() - k;
  return std::string::npos;
}

}  // namespace

const char* tool_format_name(ToolFormat f) {
  switch (f) {
    case ToolFormat::Hermes: return "hermes";
    case ToolFormat::Llama3Json: return "llama3_json";
    case ToolFormat::DeepSeekV3: return "deepseek_v3";
    case ToolFormat::Mistral: return "mistral";
    case ToolFormat::None: return "none";
  }
  return "none";
}

std::optional<ToolFormat> tool_format_named(const std::string& name) {
  for (ToolFormat f : {ToolFormat::None, ToolFormat::Hermes, ToolFormat::Llama3Json, ToolFormat::DeepSeekV3,
                       ToolFormat::Mistral})
    if (name == tool_format_name(f)) return f;
  return std::nullopt;
}

ToolFormat tool_format_of_template(const std::string& t) {
  if (t.find(kHermesOpen) != std::string::npos) return ToolFormat::Hermes;
  if (t.find(kDsBegin) != std::string::npos) return ToolFormat::DeepSeekV3;
  if (t.find(kMistral) != std::string::npos) return ToolFormat::Mistral;
  if (t.find(kPythonTag) != std::string::npos ||
      (t.find("<|start_header_id|>") != std::string::npos && t.find("tools") != std::string::npos &&
       t.find("\"parameters\"") != std::string::npos))
    return ToolFormat::Llama3Json;
  return ToolFormat::None;
}

ParsedOutput parse_tool_calls(ToolFormat f, const std::string& text) {
  switch (f) {
    case ToolFormat::Hermes: return hermes(text);
    case ToolFormat::Llama3Json: return llama3_json(text);
    case ToolFormat::DeepSeekV3: return deepseek_v3(text);
    case ToolFormat::Mistral: return mistral(text);
    case ToolFormat::None: break;
  }
  return ParsedOutput{text, {}};
}

size_t tool_call_start(ToolFormat f, const std::string& text) {
  switch (f) {
    case ToolFormat::Hermes: return marker_start(text, kHermesOpen);
    case ToolFormat::DeepSeekV3: return marker_start(text, kDsBegin);
    case ToolFormat::Mistral: return marker_start(text, kMistral);
    case ToolFormat::Llama3Json: {  // a call is the whole answer: hold while it may still be one
      const size_t b = text.find_first_not_of(" \t\r\n");
      if (b == std::string::npos) return 0;
      if (text[b] == '{') return 0;
      const size_t k = std::min(kPythonTag.size(), text.size() - b);
      return text.compare(b, k, kPythonTag, 0, k) == 0 ? 0 : std::string::npos;
    }
    case ToolFormat::None: break;
  }
  return std::string::npos;
}

}  // namespace exspec::chat
