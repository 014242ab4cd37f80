#include "http/line_start.h"

#include <algorithm>
#include <chrono>

#include "http/json_body.h"
#include "http/openai_request.h"

namespace exspec::http {

LineStart start_line(const jobs::BatchLine& line, bool chat, const ModelFacts& facts, GenerationEnv env,
                     std::shared_ptr<GenerationOutput> out) {
  LineStart s;
  GenRequest g;
  try {
    g = chat ? parse_chat_request(line.body, facts) : parse_completion_request(line.body, facts);
  } catch (const ApiError& e) {
    // A grammar compile refused for now (a full pool, a stopping server) is no fault of the line.
    if (e.status() == 429 || e.status() == 503) s.busy = true;
    else s.refused = e;  // a 400 in the error file, as the endpoint answers it
    return s;
  } catch (const nlohmann::json::exception& e) {
    s.refused = json_value_error(e);  // as route_request answers it
    return s;
  }
  auto gen = std::make_shared<Generation>(std::move(g), std::move(env), std::move(out), std::chrono::steady_clock::now());
  try {
    gen->start();
  } catch (const ApiError& e) {
    if (e.status() == 429 || e.status() == 503) s.busy = true;
    else s.refused = e;
    return s;
  }
  s.gen = std::move(gen);
  return s;
}

namespace {

class LineOut : public GenerationOutput {
 public:
  explicit LineOut(std::function<void(int, std::string)> done) : done_(std::move(done)) {}
  void send_event(std::string) override {}
  void end_stream() override {}
  void send_raw_event(std::string) override {}
  void end_raw_stream() override {}
  void send_final(int status, std::string body, std::string) override { done_(status, std::move(body)); }

 private:
  std::function<void(int, std::string)> done_;
};

struct StartedLine : jobs::LineRunner::Line {
  std::shared_ptr<Generation> gen;
  std::shared_ptr<GenerationOutput> out;  // the Generation holds it weakly
  void abort() override { gen->abort(); }  // the engine drops it at its next step
};

}  // namespace

std::shared_ptr<GenerationOutput> line_output(std::function<void(int, std::string)> done) {
  return std::make_shared<LineOut>(std::move(done));
}

size_t EndpointLines::capacity() {
  Backend* be = ctx_.backend.load();
  if (ctx_.state.load() != ServerState::Ready || !be) return 0;
  if (ctx_.cfg.limits.batch_in_flight) return ctx_.cfg.limits.batch_in_flight;
  return static_cast<size_t>(std::max<int64_t>(1, 2 * live_sequences(be->engine->options().decoding)));
}

jobs::LineRunner::Started EndpointLines::start(const jobs::BatchLine& line, bool chat, Post post, Done done) {
  Started started;
  Backend* be = ctx_.backend.load();
  if (!be) {
    started.busy = true;
    return started;
  }
  auto out = line_output(std::move(done));
  LineStart s = start_line(line, chat, be->facts, generation_env(ctx_, *be, std::move(post), 0), out);
  if (s.busy) {
    started.busy = true;
  } else if (s.refused) {
    started.refused_status = s.refused->status();
    started.refused_body = s.refused->to_json().dump();
  } else {
    auto l = std::make_shared<StartedLine>();
    l->gen = std::move(s.gen);
    l->out = std::move(out);
    started.line = std::move(l);
  }
  return started;
}

void EndpointLines::claimed(int64_t n, int64_t reclaimed, double seconds) {
  ctx_.metrics.batch_lines_claimed(n, reclaimed, seconds);
}

}  // namespace exspec::http
