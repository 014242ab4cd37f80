// One completions / chat request in flight: submits its prompts to the engine, turns token
// deltas into text (streaming detokenizer, stop strings), and hands the response or the SSE
// events to its output (the connection). Everything runs on the connection's strand: engine
// callbacks are posted there and never block the engine. Destroying a Generation (the client
// went away) cancels its unfinished sequences.
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/engine.h"
#include "http/openai_request.h"
#include "http/stop_scanner.h"
#include "http/structured_request.h"
#include "http/token_origins.h"
#include "chat/tool_stream.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec::http {

class Metrics;

class GenerationOutput {
 public:
  virtual ~GenerationOutput() = default;
  virtual void send_event(std::string payload) = 0;  // stream: the JSON of one "data:" event
  virtual void end_stream() = 0;                     // stream: "data: [DONE]" and the last chunk
  // Not streaming: the whole response; server_timing is the Server-Timing header value.
  virtual void send_final(int status, std::string body, std::string server_timing) = 0;
  // Streams of the APIs whose events are named (Anthropic Messages, OpenAI Responses): one whole
  // event as written ("event: NAME\ndata: JSON\n\n"), and the end without "data: [DONE]".
  virtual void send_raw_event(std::string event) = 0;
  virtual void end_raw_stream() = 0;
};

struct GenerationEnv {
  Engine* engine = nullptr;
  const Tokenizer* tokenizer = nullptr;
  Metrics* metrics = nullptr;
  std::string model_name;
  std::vector<int64_t> model_eos;
  const std::atomic<bool>* engine_stopping = nullptr;  // set: no more cancel() calls
  // Runs a function on the connection's strand (asio::post); must not block.
  std::function<void(std::function<void()>)> post;
  int priority = 1;  // the engine's: 1 interactive, 0 batch work (so batches never starve clients)
};

class Generation : public std::enable_shared_from_this<Generation> {
 public:
  using Clock = std::chrono::steady_clock;
  Generation(GenRequest req, GenerationEnv env, std::weak_ptr<GenerationOutput> out, Clock::time_point received);
  ~Generation();

  // Submits every prompt. Throws ApiError (400 invalid, 429 overloaded, 503 shutting down) after
  // cancelling whatever it had submitted.
  void start();
  // A request whose grammar is still to compile (req.pending_grammar): compiles it on the grammar
  // pool, then starts; what stops it there (400 invalid or over budget, 429, 503) is the answer
  // sent to the output. abort() meanwhile cancels the compile.
  void compile_then_start(grammar::GrammarService* grammars);
  bool compiling() const { return compiling_ != nullptr; }
  // The client went away: cancel the compile or the unfinished sequences, send nothing more.
  void abort();
  bool stream() const { return req_.stream; }
  // An output the Generation keeps alive while it lives (it holds its output weakly): another
  // API's writer over the connection (http/dialect_output.h).
  void hold(std::shared_ptr<GenerationOutput> owned) { owned_out_ = std::move(owned); }

 private:
  struct Choice {
    PromptIn prompt;
    uint64_t index = 0;  // the choice index within its prompt (keys the sampler's random numbers)
    SeqId id = 0;
    bool done = false;
    size_t received = 0;  // token ids seen from the engine
    std::vector<int64_t> tokens;  // ids that count (up to the one that completed a stop string)
    std::optional<IncrementalDecoder> decoder;
    StopScanner stop;
    std::string text;  // text sent / to send (stop string trimmed)
    FinishReason finish = FinishReason::None;
    std::string error;
    std::vector<TokenLogprob> logprobs;  // as received (logprobs requested)
    nlohmann::ordered_json prompt_logprobs;  // echo with logprobs: the prompt's entries (else null)
    int64_t drafted = 0, accepted = 0;   // its draft tokens, and the accepted ones (from the result)
    size_t logprobs_sent = 0, text_offset = 0;  // streaming: entries already sent
    std::optional<chat::ToolCallStream> tool_stream;   // chat with tools, streaming: holds back calls
    OriginTrail origins;                         // stream_options.include_origin
  };
  class Sink;

  void on_compiled(CompileOutcome outcome);
  void on_tokens(size_t i, const std::vector<int64_t>& delta);
  void on_logprobs(size_t i, const std::vector<TokenLogprob>& delta);
  void on_origins(size_t i, const TokenOrigins& delta);
  // echo with logprobs: the target's logprobs of choice i's prompt, from the engine's prefill
  // (the first token's logprob and top are null), into prompt_logprobs (the generated entries'
  // text_offset then follows them); a stream's echo of the prompt goes out with them.
  void on_prompt_logprobs(size_t i, const std::vector<TokenLogprob>& entries);
  bool scores_prompt() const { return req_.echo && !req_.chat && req_.sampling.params.logprobs >= 0; }
  // The logprobs of choice i's counted tokens not sent yet, as JSON (null when not asked for).
  nlohmann::ordered_json take_logprobs(size_t i);
  // The prompt's entries (if any) followed by `generated` (take_logprobs' JSON, or null).
  nlohmann::ordered_json with_prompt_logprobs(size_t i, nlohmann::ordered_json generated) const;
  void on_finish(size_t i, const SeqResult& r);
  void take_tokens(size_t i, const std::vector<int64_t>& ids, size_t from);
  void emit_text(size_t i, const std::string& text, const char* finish);
  void complete();
  // One chunk of choice i (with include_origin: the origins of its tokens counted since the last).
  std::string chunk(size_t i, const std::string& text, const char* finish, bool first_chat,
                    nlohmann::ordered_json logprobs = nullptr, nlohmann::ordered_json tool_call = nullptr);
  // Streaming with tools: the held-back rest of choice i, its calls as deltas, and the last chunk.
  void finish_tool_stream(size_t i, const char* finish);
  // Non-streaming: choice i's message ({"role", "content", "tool_calls"}), the finish reason set.
  nlohmann::ordered_json message(size_t i, std::string& finish) const;
  bool is_stop_id(int64_t id) const;
  nlohmann::ordered_json stop_reason(size_t i) const;  // the stop string that ended choice i, or null
  std::string usage_json() const;

  GenRequest req_;
  GenerationEnv env_;
  std::vector<int64_t> stop_ids_;  // EOS, the template's end of turn, stop_token_ids
  std::weak_ptr<GenerationOutput> out_;
  std::shared_ptr<GenerationOutput> owned_out_;
  std::vector<Choice> choices_;
  std::string id_;
  int64_t created_ = 0;
  size_t open_ = 0;
  bool aborted_ = false, finished_ = false;
  std::shared_ptr<std::atomic<bool>> compiling_;  // set: a compile runs; storing true cancels it
  Clock::time_point received_, submitted_, first_token_, ended_;
  bool got_first_ = false;
};

}  // namespace exspec::http
