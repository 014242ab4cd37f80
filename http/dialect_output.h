// Another API's answer written over a chat-completions Generation. The Generation writes what it
// always writes (chat.completion chunks, the usage chunk and the stream's end, or the whole
// chat.completion, or an error in OpenAI's shape); a DialectOutput reads it as a ChatAnswer and
// its writer turns that into its own API's events or body on the connection (Anthropic Messages:
// http/messages_output.h; OpenAI Responses: http/responses_output.h). The Generation keeps it
// alive (Generation::hold). Torch-free.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/api_error.h"
#include "http/generation.h"

namespace exspec::http {

// What the writers read of a chat answer (streamed: its finish, stop string and usage only).
struct ChatAnswer {
  struct Call {
    std::string id, name, arguments;  // arguments: JSON text
  };
  std::string text;
  std::vector<Call> calls;
  std::string finish;              // chat's finish_reason: stop, length, tool_calls
  nlohmann::ordered_json stop;     // the stop string that ended the text (GenRequest::report_stop), else null
  int64_t prompt_tokens = 0, completion_tokens = 0;
};

class DialectOutput : public GenerationOutput {
 public:
  explicit DialectOutput(std::weak_ptr<GenerationOutput> to) : to_(std::move(to)) {}

  void send_event(std::string payload) final;  // a chunk (or an error) of a stream
  void end_stream() final;
  void send_final(int status, std::string body, std::string server_timing) final;
  void send_raw_event(std::string event) final;
  void end_raw_stream() final;

 protected:
  // A stream, in order: its start, text pieces and calls (each call's id and name, then pieces of
  // its arguments) as they come, then its end, or an error instead.
  virtual void stream_start() = 0;
  virtual void stream_text(const std::string& piece) = 0;
  virtual void stream_call(const std::string& id, const std::string& name) = 0;
  virtual void stream_arguments(const std::string& piece) = 0;
  virtual void stream_end(const ChatAnswer& end) = 0;
  virtual void stream_error(const ApiError& e) = 0;
  // Not streaming: the answer, or an error, as this API's response body.
  virtual std::string answer(const ChatAnswer& a) = 0;
  virtual std::string error_body(const ApiError& e) const = 0;

  // One named event: "event: NAME\ndata: JSON\n\n".
  void emit(const std::string& name, const nlohmann::ordered_json& data);

 private:
  void on_chunk(const nlohmann::ordered_json& chunk);

  std::weak_ptr<GenerationOutput> to_;
  bool started_ = false, failed_ = false;
  ChatAnswer end_;
};

// An error body in OpenAI's shape ({"error": {message, type, param, code}}) as an ApiError.
ApiError api_error_of(int status, const nlohmann::ordered_json& body);

// JSON text as the server writes it (invalid UTF-8 replaced).
std::string dump(const nlohmann::ordered_json& j);

}  // namespace exspec::http
