#include "tests/http/fairness_support.h"

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace exspec::httptest {

json constrained(const json& schema, bool stream, int max_tokens) {
  return {{"prompt", "x"}, {"max_tokens", max_tokens}, {"stream", stream},
          {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "n"}, {"schema", schema}}}}}};
}

double streaming_rate(int port, double seconds, std::atomic<bool>& failed) {
  using Clock = std::chrono::steady_clock;
  std::atomic<int64_t> tokens{0};
  std::vector<std::thread> clients;
  const auto t0 = Clock::now();
  auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  for (int i = 0; i < 8; ++i)
    clients.emplace_back([&, i] {
      while (since(t0) < seconds) {
        const json body{{"prompt", "client " + std::to_string(i)}, {"max_tokens", 32}, {"ignore_eos", true},
                        {"stream", true}, {"stream_options", {{"include_usage", true}}}};
        HttpResult r = post(port, "/v1/completions", body, 120);
        bool done = false;
        const std::vector<json> events = sse_events(r.body, &done);
        if (r.status != 200 || !done || events.empty() || !events.back()["usage"].is_object()) {
          failed = true;
          return;
        }
        tokens += events.back()["usage"]["completion_tokens"].get<int64_t>();
      }
    });
  for (auto& c : clients) c.join();
  return static_cast<double>(tokens.load()) / since(t0);
}

double fairness_bound() {
  const char* bound = std::getenv("EXSPEC_FAIRNESS_BOUND");
  return bound && *bound ? std::stod(bound) : 0.0;
}

}  // namespace exspec::httptest
