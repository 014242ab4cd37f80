// Many clients at once: every result equals the float64 oracle, streamed or not.
#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

TEST_CASE("concurrent requests equal the float64 oracle") {
  const int port = shared_server().port();
  const int n = 16;
  std::vector<std::vector<int64_t>> prompts;
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t> p{256};
    for (int k = 0; k < 3 + (i * 7) % 29; ++k) p.push_back(32 + (i * 31 + k * 17) % 90);
    prompts.push_back(p);
  }
  const int64_t max_tokens = 32;
  const auto want = oracle(prompts, max_tokens);
  std::vector<std::vector<int64_t>> got(n);
  std::vector<std::string> errors(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        const bool stream = i % 3 == 0;
        json body{{"model", "target"}, {"prompt", prompts[i]}, {"max_tokens", max_tokens}, {"return_token_ids", true},
                  {"stream", stream}};
        HttpResult r = post(port, "/v1/completions", body, 120);
        if (r.status != 200) {
          errors[i] = "status " + std::to_string(r.status) + ": " + r.body;
          return;
        }
        if (stream) {
          for (const auto& e : sse_events(r.body))
            if (!e["choices"].empty() && e["choices"][0].contains("token_ids"))
              got[i] = e["choices"][0]["token_ids"].get<std::vector<int64_t>>();
        } else {
          got[i] = json::parse(r.body)["choices"][0]["token_ids"].get<std::vector<int64_t>>();
        }
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < n; ++i) {
    INFO("request " << i << ": " << errors[i]);
    CHECK(errors[i].empty());
    CHECK(got[i] == want[i].ids);
  }
}
