#include "http/messages_output.h"

#include <algorithm>

#include "http/dialect_output.h"
#include "jobs/random_id.h"

namespace exspec::http {
namespace {

using nlohmann::ordered_json;

ordered_json tool_use_block(const std::string& id, const std::string& name, ordered_json input) {
  return {{"type", "tool_use"}, {"id", tool_use_id(id)}, {"name", name}, {"input", std::move(input)}};
}

class MessagesOutput : public DialectOutput {
 public:
  MessagesOutput(std::weak_ptr<GenerationOutput> to, std::string model, int64_t input_tokens,
                 std::vector<std::string> stops)
      : DialectOutput(std::move(to)), id_(jobs::random_id("msg_")), model_(std::move(model)),
        input_tokens_(input_tokens), stop_sequences_(std::move(stops)) {}

 private:
  std::string error_body(const ApiError& e) const override { return dump(e.to_anthropic_json()); }

  std::string answer(const ChatAnswer& a) override {
    ordered_json content = ordered_json::array();
    if (!a.text.empty() || a.calls.empty()) content.push_back({{"type", "text"}, {"text", a.text}});
    for (const auto& c : a.calls) {
      ordered_json input = ordered_json::parse(c.arguments, nullptr, false);
      content.push_back(tool_use_block(c.id, c.name, input.is_object() ? input : ordered_json::object()));
    }
    ordered_json m = message(std::move(content), a);
    m["usage"] = {{"input_tokens", a.prompt_tokens}, {"output_tokens", a.completion_tokens}};
    return dump(m);
  }

  // The message object (without a finish in `a`: as message_start has it, no stop reason yet).
  ordered_json message(ordered_json content, const ChatAnswer& a) const {
    const auto [reason, sequence] = stop_of(a);
    return {{"id", id_}, {"type", "message"}, {"role", "assistant"}, {"model", model_}, {"content", std::move(content)},
            {"stop_reason", reason}, {"stop_sequence", sequence}};
  }

  // chat's finish (and the stop string that ended it) as stop_reason and stop_sequence.
  std::pair<ordered_json, ordered_json> stop_of(const ChatAnswer& a) const {
    if (a.finish.empty()) return {nullptr, nullptr};
    if (a.finish == "tool_calls") return {"tool_use", nullptr};
    if (a.finish == "length") return {"max_tokens", nullptr};
    const bool mine = a.stop.is_string() &&
                      std::find(stop_sequences_.begin(), stop_sequences_.end(), a.stop.get<std::string>()) != stop_sequences_.end();
    if (mine) return {"stop_sequence", a.stop};
    return {"end_turn", nullptr};
  }

  void stream_start() override {
    ordered_json m = message(ordered_json::array(), ChatAnswer{});
    m["usage"] = {{"input_tokens", input_tokens_}, {"output_tokens", 0}};
    emit("message_start", {{"type", "message_start"}, {"message", std::move(m)}});
    emit("ping", {{"type", "ping"}});
  }

  void open_block(ordered_json block) {
    close_block();
    emit("content_block_start", {{"type", "content_block_start"}, {"index", blocks_}, {"content_block", std::move(block)}});
    block_open_ = true;
    ++blocks_;
  }

  void close_block() {
    if (!block_open_) return;
    emit("content_block_stop", {{"type", "content_block_stop"}, {"index", blocks_ - 1}});
    block_open_ = text_open_ = false;
  }

  void delta(ordered_json d) {
    emit("content_block_delta", {{"type", "content_block_delta"}, {"index", blocks_ - 1}, {"delta", std::move(d)}});
  }

  void stream_text(const std::string& piece) override {
    if (!text_open_) {
      open_block({{"type", "text"}, {"text", ""}});
      text_open_ = true;
    }
    if (!piece.empty()) delta({{"type", "text_delta"}, {"text", piece}});
  }

  void stream_call(const std::string& id, const std::string& name) override {
    open_block(tool_use_block(id, name, ordered_json::object()));
  }

  void stream_arguments(const std::string& piece) override {
    if (block_open_ && !text_open_) delta({{"type", "input_json_delta"}, {"partial_json", piece}});
  }

  void stream_end(const ChatAnswer& end) override {
    if (blocks_ == 0) stream_text("");  // an empty answer: one empty text block, as when not streamed
    close_block();
    const auto [reason, sequence] = stop_of(end);
    emit("message_delta", {{"type", "message_delta"},
                           {"delta", {{"stop_reason", reason}, {"stop_sequence", sequence}}},
                           {"usage", {{"output_tokens", end.completion_tokens}}}});
    emit("message_stop", {{"type", "message_stop"}});
  }

  void stream_error(const ApiError& e) override { emit("error", e.to_anthropic_json()); }

  std::string id_, model_;
  int64_t input_tokens_ = 0;
  std::vector<std::string> stop_sequences_;
  bool block_open_ = false, text_open_ = false;
  int blocks_ = 0;  // blocks opened so far: the next one's index
};

}  // namespace

std::string tool_use_id(const std::string& call_id) {
  return "toolu_" + (call_id.rfind("call_", 0) == 0 ? call_id.substr(5) : call_id);
}

std::shared_ptr<GenerationOutput> messages_output(std::weak_ptr<GenerationOutput> to, std::string model,
                                                  int64_t input_tokens, std::vector<std::string> stop_sequences) {
  return std::make_shared<MessagesOutput>(std::move(to), std::move(model), input_tokens, std::move(stop_sequences));
}

}  // namespace exspec::http
