#include "chat/tool_stream.h"

namespace exspec::chat {

using nlohmann::ordered_json;

ToolAnswer split_answer(ToolFormat f, const std::string& text, bool parallel, bool finished) {
  if (!finished) return ToolAnswer{text, {}};
  ParsedOutput p = parse_tool_calls(f, text);
  if (!parallel && p.calls.size() > 1) p.calls.resize(1);
  return ToolAnswer{std::move(p.content), std::move(p.calls)};
}

std::string ToolCallStream::feed(const std::string& piece) {
  text_ += piece;
  const size_t at = tool_call_start(format_, text_);
  const size_t safe = at == std::string::npos ? text_.size() : at;
  if (safe <= sent_) return "";
  std::string out = text_.substr(sent_, safe - sent_);
  sent_ = safe;
  return out;
}

ToolAnswer ToolCallStream::finish(bool finished) {
  ToolAnswer a = split_answer(format_, text_, parallel_, finished);
  if (a.calls.empty()) return ToolAnswer{text_.substr(sent_), {}};
  a.content = a.content.size() > sent_ ? a.content.substr(sent_) : "";
  return a;
}

ordered_json tool_calls_json(const std::vector<ToolCall>& calls, const std::vector<std::string>& ids) {
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < calls.size(); ++i)
    out.push_back({{"id", ids.at(i)},
                   {"type", "function"},
                   {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}});
  return out;
}

std::vector<ordered_json> tool_call_deltas(const std::vector<ToolCall>& calls, const std::vector<std::string>& ids) {
  std::vector<ordered_json> out;
  for (size_t i = 0; i < calls.size(); ++i) {
    out.push_back({{"index", i},
                   {"id", ids.at(i)},
                   {"type", "function"},
                   {"function", {{"name", calls[i].name}, {"arguments", ""}}}});
    out.push_back({{"index", i}, {"function", {{"arguments", calls[i].arguments}}}});
  }
  return out;
}

}  // namespace exspec::chat
