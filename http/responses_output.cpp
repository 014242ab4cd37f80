#include "http/responses_output.h"

#include "http/openai_request.h"
#include "http/responses_request.h"
#include "jobs/random_id.h"

namespace exspec::http {
namespace {

using nlohmann::ordered_json;

ordered_json usage_of(const ChatAnswer& a) {
  return {{"input_tokens", a.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", 0}}},
          {"output_tokens", a.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", a.prompt_tokens + a.completion_tokens}};
}

ordered_json or_default(const ordered_json& v, ordered_json dflt) { return v.is_null() ? dflt : v; }

ordered_json call_item(const ChatAnswer::Call& c, const char* status) {
  return {{"type", "function_call"}, {"id", jobs::random_id("fc_")}, {"call_id", c.id},
          {"name", c.name}, {"arguments", c.arguments}, {"status", status}};
}

class ResponsesOutput : public DialectOutput {
 public:
  ResponsesOutput(std::weak_ptr<GenerationOutput> to, std::string model, ordered_json echo, int64_t input_tokens,
                  ResponseDone done)
      : DialectOutput(std::move(to)), id_(jobs::random_id("resp_")), model_(std::move(model)),
        msg_id_(jobs::random_id("msg_")), echo_(std::move(echo)), created_at_(unix_now()), done_(std::move(done)) {
    usage_ = usage_of(ChatAnswer{"", {}, "", nullptr, input_tokens, 0});
  }

 private:
  std::string error_body(const ApiError& e) const override { return dump(responses_error(e).to_json()); }

  std::string answer(const ChatAnswer& a) override {
    const char* status = a.finish == "length" ? "incomplete" : "completed";
    if (!a.text.empty() || a.calls.empty()) output_.push_back(message_item(a.text, status));
    for (const auto& c : a.calls) output_.push_back(call_item(c, "completed"));
    usage_ = usage_of(a);
    const ordered_json r = response(status);
    if (done_) done_(r, a);
    return dump(r);
  }

  // The response object as it stands: `status`, the output items closed so far.
  ordered_json response(const std::string& status) const {
    ordered_json r{{"id", id_}, {"object", "response"}, {"created_at", created_at_}, {"status", status},
                   {"background", false}, {"error", nullptr}, {"incomplete_details", nullptr}};
    if (status == "incomplete") r["incomplete_details"] = {{"reason", "max_output_tokens"}};
    r["instructions"] = echo_["instructions"];
    r["max_output_tokens"] = echo_["max_output_tokens"];
    r["metadata"] = or_default(echo_["metadata"], ordered_json::object());
    r["model"] = model_;
    r["output"] = output_;
    r["parallel_tool_calls"] = or_default(echo_["parallel_tool_calls"], true);
    r["previous_response_id"] = echo_["previous_response_id"];
    r["store"] = echo_.value("store", false);
    r["temperature"] = echo_["temperature"];
    r["text"] = or_default(echo_["text"], {{"format", {{"type", "text"}}}});
    r["tool_choice"] = or_default(echo_["tool_choice"], "auto");
    r["tools"] = or_default(echo_["tools"], ordered_json::array());
    r["top_p"] = echo_["top_p"];
    r["truncation"] = "disabled";
    r["usage"] = usage_;
    r["user"] = echo_["user"];
    return r;
  }

  ordered_json message_item(const std::string& text, const std::string& status) const {
    ordered_json content = ordered_json::array();
    if (status != "in_progress") content.push_back(text_part(text));
    return {{"type", "message"}, {"id", msg_id_}, {"status", status}, {"role", "assistant"}, {"content", std::move(content)}};
  }

  static ordered_json text_part(const std::string& text) {
    return {{"type", "output_text"}, {"text", text}, {"annotations", ordered_json::array()}};
  }

  void event(const std::string& type, ordered_json data) {
    ordered_json e{{"type", type}, {"sequence_number", sequence_++}};
    for (auto it = data.begin(); it != data.end(); ++it) e[it.key()] = std::move(*it);
    emit(type, e);
  }

  // The open item's place: output_index, and item_id / content_index of its text.
  ordered_json at(bool text) const {
    ordered_json j{{"item_id", text ? ordered_json(msg_id_) : call_["id"]}, {"output_index", output_.size()}};
    if (text) j["content_index"] = 0;
    return j;
  }

  void stream_start() override {
    event("response.created", {{"response", response("in_progress")}});
    event("response.in_progress", {{"response", response("in_progress")}});
  }

  void stream_text(const std::string& piece) override {
    if (!message_open_) {
      message_open_ = true;
      event("response.output_item.added", {{"output_index", output_.size()}, {"item", message_item("", "in_progress")}});
      ordered_json added = at(true);
      added["part"] = text_part("");
      event("response.content_part.added", std::move(added));
    }
    if (piece.empty()) return;
    text_ += piece;
    ordered_json d = at(true);
    d["delta"] = piece;
    d["logprobs"] = ordered_json::array();
    event("response.output_text.delta", std::move(d));
  }

  void close_message(const char* status) {
    if (!message_open_) return;
    message_open_ = false;
    ordered_json done = at(true);
    done["text"] = text_;
    done["logprobs"] = ordered_json::array();
    event("response.output_text.done", done);
    done.erase("text"), done.erase("logprobs");
    done["part"] = text_part(text_);
    event("response.content_part.done", std::move(done));
    output_.push_back(message_item(text_, status));
    event("response.output_item.done", {{"output_index", output_.size() - 1}, {"item", output_.back()}});
  }

  void stream_call(const std::string& id, const std::string& name) override {
    close_message("completed");
    close_call();
    call_ = call_item({id, name, ""}, "in_progress");
    event("response.output_item.added", {{"output_index", output_.size()}, {"item", call_}});
  }

  void stream_arguments(const std::string& piece) override {
    if (call_.is_null()) return;
    call_["arguments"] = call_["arguments"].get<std::string>() + piece;
    ordered_json d = at(false);
    d["delta"] = piece;
    event("response.function_call_arguments.delta", std::move(d));
  }

  void close_call() {
    if (call_.is_null()) return;
    ordered_json done = at(false);
    done["name"] = call_["name"];
    done["arguments"] = call_["arguments"];
    event("response.function_call_arguments.done", std::move(done));
    call_["status"] = "completed";
    output_.push_back(std::move(call_));
    call_ = nullptr;
    event("response.output_item.done", {{"output_index", output_.size() - 1}, {"item", output_.back()}});
  }

  void stream_end(const ChatAnswer& end) override {
    const bool cut = end.finish == "length";
    if (output_.empty() && call_.is_null()) stream_text("");  // an empty answer: one empty message
    close_message(cut ? "incomplete" : "completed");
    close_call();
    usage_ = usage_of(end);
    const ordered_json r = response(cut ? "incomplete" : "completed");
    if (done_) {
      ChatAnswer whole = end;  // the stream's text and calls, as the whole answer has them
      whole.text = text_;
      for (const auto& item : output_)
        if (item["type"] == "function_call")
          whole.calls.push_back({item["call_id"].get<std::string>(), item["name"].get<std::string>(),
                                 item["arguments"].get<std::string>()});
      done_(r, whole);
    }
    event(cut ? "response.incomplete" : "response.completed", {{"response", r}});
  }

  void stream_error(const ApiError& e) override {
    const ApiError named = responses_error(e);
    auto or_null = [](const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); };
    event("error", {{"code", or_null(named.code())}, {"message", named.what()}, {"param", or_null(named.param())}});
    ordered_json r = response("failed");
    r["error"] = {{"code", named.code().empty() ? "server_error" : named.code()}, {"message", named.what()}};
    event("response.failed", {{"response", std::move(r)}});
  }

  std::string id_, model_, msg_id_;
  ordered_json echo_, output_ = ordered_json::array(), usage_;
  int64_t created_at_ = 0, sequence_ = 0;
  bool message_open_ = false;
  std::string text_;
  ordered_json call_;  // the function_call item being streamed, or null
  ResponseDone done_;
};

}  // namespace

std::shared_ptr<GenerationOutput> responses_output(std::weak_ptr<GenerationOutput> to, std::string model,
                                                   ordered_json echo, int64_t input_tokens, ResponseDone done) {
  return std::make_shared<ResponsesOutput>(std::move(to), std::move(model), std::move(echo), input_tokens,
                                           std::move(done));
}

}  // namespace exspec::http
