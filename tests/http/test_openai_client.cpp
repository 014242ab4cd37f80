// The official `openai` npm client (6.x) as a real client: completions and chat, plain and
// streamed, greedy and sampled (temperature, top_p, seed, n = 3, logprobs), models, and its view
// of our errors. Needs tests/http/fetch.sh to have run.
#include <filesystem>

#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

TEST_CASE("the official openai npm client gets the oracle's text and our errors") {
  const std::string dir = HTTP_TEST_DIR;
  if (!std::filesystem::exists(dir + "/node_modules/openai/package.json"))
    FAIL("the openai npm package is missing: run tests/http/fetch.sh (scripts/test does)");
  const int port = shared_server().port();
  int st = 0;
  const std::string cmd = "cd " + dir + " && timeout 120 node openai_client.mjs http://127.0.0.1:" +
                          std::to_string(port) + "/v1 target 2>&1";
  const std::string out = run_capture(cmd, &st);
  INFO(out);
  REQUIRE(st == 0);
  const json j = json::parse(out.substr(out.rfind("\n{") == std::string::npos ? 0 : out.rfind("\n{") + 1));
  // What the server returns to a raw HTTP client for the same requests.
  HttpResult raw = post(port, "/v1/completions", {{"model", "target"}, {"prompt", "Hello from node"}, {"max_tokens", 16},
                                                  {"return_token_ids", true}});
  REQUIRE(raw.status == 200);
  const json rj = raw.json_body();
  const auto want = oracle({bytes_of("Hello from node")}, 16)[0];
  CHECK(rj["choices"][0]["token_ids"].get<std::vector<int64_t>>() == want.ids);
  CHECK(j["completion"]["text"] == rj["choices"][0]["text"]);
  CHECK(j["completion"]["object"] == "text_completion");
  CHECK(j["completion"]["finish"] == want.finish);
  CHECK(j["completion"]["usage"]["completion_tokens"] == want.ids.size());
  CHECK(j["completion_stream"]["text"] == rj["choices"][0]["text"]);
  CHECK(j["completion_stream"]["usage"]["completion_tokens"] == want.ids.size());
  HttpResult rc = post(port, "/v1/chat/completions",
                       {{"model", "target"}, {"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})},
                        {"max_tokens", 12}});
  REQUIRE(rc.status == 200);
  CHECK(j["chat"]["content"] == rc.json_body()["choices"][0]["message"]["content"]);
  CHECK(j["chat"]["role"] == "assistant");
  CHECK(j["chat_stream"]["content"] == j["chat"]["content"]);
  CHECK(j["models"] == json::array({"target"}));
  // vLLM's extensions through the client's body: </s> pushed up (logit_bias) and a stop token id,
  // but masked while min_tokens = max_tokens: six other tokens, and the length ends it.
  CHECK(j["extra"]["usage"]["completion_tokens"] == 6);
  CHECK(j["extra"]["finish"] == "length");
  CHECK(j["n17"]["status"] == 400);
  CHECK(j["n17"]["param"] == "n");
  // Sampling through the client: three choices, their logprobs, the same texts streamed (the
  // seed fixes them), and the same as a raw request with the same seed.
  CHECK(j["sampled"]["indexes"] == json::array({0, 1, 2}));
  CHECK(j["sampled"]["seed"] == 42);
  CHECK(j["sampled_stream"]["texts"] == j["sampled"]["texts"]);
  HttpResult rs = post(port, "/v1/completions", {{"model", "target"}, {"prompt", "Hello from node"}, {"max_tokens", 12},
                                                 {"temperature", 0.9}, {"top_p", 0.95}, {"seed", 42}, {"n", 3},
                                                 {"return_token_ids", true}});
  REQUIRE(rs.status == 200);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(j["sampled"]["texts"][i] == rs.json_body()["choices"][i]["text"]);
    CHECK(j["sampled"]["logprob_counts"][i] == rs.json_body()["choices"][i]["token_ids"].size());
  }
  CHECK(j["sampled_chat_stream"]["contents"] == j["sampled_chat"]["contents"]);
  for (size_t i = 0; i < 3; ++i) CHECK(j["sampled_chat"]["top_counts"][i] == 2);
  CHECK(j["bad_model"]["status"] == 404);
  CHECK(j["bad_model"]["code"] == "model_not_found");
}
