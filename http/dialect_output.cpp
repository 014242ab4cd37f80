#include "http/dialect_output.h"

namespace exspec::http {
namespace {

using nlohmann::ordered_json;

const std::string* nonempty_string(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) return nullptr;
  return &it->get_ref<const std::string&>();
}

// The whole chat.completion's first choice and usage.
ChatAnswer answer_of(const ordered_json& completion) {
  ChatAnswer a;
  const ordered_json& choice = completion.at("choices").at(0);
  const ordered_json& msg = choice.at("message");
  if (const std::string* t = nonempty_string(msg, "content")) a.text = *t;
  if (msg.contains("tool_calls"))
    for (const auto& c : msg["tool_calls"])
      a.calls.push_back({c.at("id").get<std::string>(), c.at("function").at("name").get<std::string>(),
                         c.at("function").at("arguments").get<std::string>()});
  a.finish = choice.at("finish_reason").get<std::string>();
  if (choice.contains("stop_reason")) a.stop = choice["stop_reason"];
  a.prompt_tokens = completion.at("usage").at("prompt_tokens").get<int64_t>();
  a.completion_tokens = completion.at("usage").at("completion_tokens").get<int64_t>();
  return a;
}

}  // namespace

std::string dump(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

ApiError api_error_of(int status, const ordered_json& body) {
  const ordered_json e = body.is_object() && body.contains("error") ? body["error"] : ordered_json::object();
  auto text = [&e](const char* k) { return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : std::string(); };
  return ApiError(status, text("message"), text("param"), text("code"), text("type"));
}

void DialectOutput::send_event(std::string payload) {
  const ordered_json j = ordered_json::parse(payload, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    failed_ = true;
    return stream_error(api_error_of(500, j));
  }
  on_chunk(j);
}

// chat's chunks: the first has the role; text in delta.content; a call's first delta its id and
// name, the next its arguments; the last of the choice its finish_reason; then the usage alone.
void DialectOutput::on_chunk(const ordered_json& chunk) {
  if (!started_) started_ = true, stream_start();
  if (chunk.contains("usage") && chunk["usage"].is_object()) {
    end_.prompt_tokens = chunk["usage"]["prompt_tokens"].get<int64_t>();
    end_.completion_tokens = chunk["usage"]["completion_tokens"].get<int64_t>();
  }
  if (!chunk.contains("choices") || chunk["choices"].empty()) return;
  const ordered_json& ch = chunk["choices"][0];
  if (ch["finish_reason"].is_string()) {
    end_.finish = ch["finish_reason"].get<std::string>();
    if (ch.contains("stop_reason")) end_.stop = ch["stop_reason"];
  }
  const ordered_json& delta = ch["delta"];
  if (const std::string* t = nonempty_string(delta, "content")) stream_text(*t);
  if (!delta.contains("tool_calls")) return;
  for (const auto& c : delta["tool_calls"]) {
    const ordered_json& f = c.at("function");
    if (c.contains("id")) stream_call(c["id"].get<std::string>(), f.at("name").get<std::string>());
    if (const std::string* args = nonempty_string(f, "arguments")) stream_arguments(*args);
  }
}

void DialectOutput::end_stream() {
  if (!failed_) {
    if (!started_) started_ = true, stream_start();
    stream_end(end_);
  }
  end_raw_stream();
}

void DialectOutput::send_final(int status, std::string body, std::string server_timing) {
  auto to = to_.lock();
  if (!to) return;
  const ordered_json j = ordered_json::parse(body, nullptr, false);
  if (status != 200) return to->send_final(status, error_body(api_error_of(status, j)), std::move(server_timing));
  to->send_final(200, answer(answer_of(j)), std::move(server_timing));
}

void DialectOutput::send_raw_event(std::string event) {
  if (auto to = to_.lock()) to->send_raw_event(std::move(event));
}

void DialectOutput::end_raw_stream() {
  if (auto to = to_.lock()) to->end_raw_stream();
}

void DialectOutput::emit(const std::string& name, const ordered_json& data) {
  send_raw_event("event: " + name + "\ndata: " + dump(data) + "\n\n");
}

}  // namespace exspec::http
