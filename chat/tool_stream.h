// A chat answer with tools, as OpenAI returns it: the content and message.tool_calls, or, while
// streaming, content deltas for the text that cannot start a call (the rest is held back) and
// tool-call deltas at the end. Pure logic over chat/tool_calls.h. Torch-free.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/tool_calls.h"

namespace exspec::chat {

struct ToolAnswer {
  std::string content;
  std::vector<ToolCall> calls;  // parallel false: the first call only
};

// finished: the model ended its answer (an end token, a stop string); an answer cut by max_tokens
// is all content (finish_reason "length"), whatever calls it may hold.
ToolAnswer split_answer(ToolFormat f, const std::string& text, bool parallel, bool finished = true);

class ToolCallStream {
 public:
  ToolCallStream(ToolFormat f, bool parallel) : format_(f), parallel_(parallel) {}
  // The answer grew by `piece`: the content that can be sent now.
  std::string feed(const std::string& piece);
  // The answer ended: the content not sent yet, and the calls (none unless `finished`, as
  // split_answer).
  ToolAnswer finish(bool finished = true);

 private:
  ToolFormat format_;
  bool parallel_;
  std::string text_;
  size_t sent_ = 0;
};

// message.tool_calls: [{"id", "type": "function", "function": {"name", "arguments"}}], ids given.
nlohmann::ordered_json tool_calls_json(const std::vector<ToolCall>& calls, const std::vector<std::string>& ids);
// A stream's deltas for the calls, in OpenAI's order: for each call one delta with its index, id,
// type and name (arguments ""), then one with its arguments.
std::vector<nlohmann::ordered_json> tool_call_deltas(const std::vector<ToolCall>& calls,
                                                     const std::vector<std::string>& ids);

}  // namespace exspec::chat
