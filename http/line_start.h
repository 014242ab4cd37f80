// One batch line started as its endpoint would run it: the same for the server's batch runner
// (through EndpointLines, its jobs::LineRunner) and for `exspec batch`.
#pragma once
#include <functional>
#include <memory>
#include <optional>

#include "http/api_error.h"
#include "http/generation.h"
#include "http/server_context.h"
#include "jobs/batch_lines.h"
#include "jobs/batch_runner.h"

namespace exspec::http {

struct LineStart {
  std::shared_ptr<Generation> gen;  // started: it answers through the output it was given
  std::optional<ApiError> refused;  // not started: what the endpoint would have answered
  bool busy = false;                // not started: the engine is full or stopping (429/503), retry later
};

// Where a line's Generation hands its answer: `done` gets the status and body (a line never
// streams: batches refuse stream at validation).
std::shared_ptr<GenerationOutput> line_output(std::function<void(int status, std::string body)> done);

// chat: the line is a /v1/chat/completions request (else /v1/completions).
LineStart start_line(const jobs::BatchLine& line, bool chat, const ModelFacts& facts, GenerationEnv env,
                     std::shared_ptr<GenerationOutput> out);

// The server's lines for the batch runner: started as above at priority 0 (interactive requests
// use 1), while the server is ready, at most limits.batch_in_flight at once (0: twice the
// engine's window).
class EndpointLines : public jobs::LineRunner {
 public:
  explicit EndpointLines(ServerContext& ctx) : ctx_(ctx) {}
  size_t capacity() override;
  Started start(const jobs::BatchLine& line, bool chat, Post post, Done done) override;
  void claimed(int64_t n, int64_t reclaimed, double seconds) override;

 private:
  ServerContext& ctx_;
};

}  // namespace exspec::http
