// Sampling over HTTP: temperature, top_p, seed, n, logprobs, streaming with n > 1. The shared
// server speculates (exspec, B 4, K 3, float64); every sampled choice must equal plain sampling
// of the target with the same seed (`exspec generate --oracle --temperature ...`), token for token.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

json post_ok(const std::string& path, const json& body) {
  HttpResult r = post(shared_server().port(), path, body);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json_body();
}

}  // namespace

TEST_CASE("sampling: n choices with a seed equal plain sampling of the target, logprobs too") {
  const auto prompt = bytes_of("Once upon a time");
  json body{{"model", "target"}, {"prompt", prompt}, {"max_tokens", 16}, {"temperature", 0.8}, {"top_p", 0.9},
            {"seed", 1234}, {"n", 3}, {"logprobs", 2}, {"return_token_ids", true}};
  const json r = post_ok("/v1/completions", body);
  const auto want = sampled_oracle(prompt, 16, "--temperature 0.8 --top-p 0.9 --seed 1234 --n 3 --logprobs 2");
  REQUIRE(r["choices"].size() == 3);
  REQUIRE(want.size() == 3);
  CHECK(r["seed"] == 1234);
  CHECK(r["usage"]["prompt_tokens"] == prompt.size());  // the prompt counts once
  std::set<std::vector<int64_t>> distinct;
  for (size_t i = 0; i < 3; ++i) {
    const json& ch = r["choices"][i];
    CHECK(ch["index"] == i);
    const auto ids = ch["token_ids"].get<std::vector<int64_t>>();
    CHECK(ids == want[i].ids);
    distinct.insert(ids);
    const json& lp = ch["logprobs"];
    REQUIRE(lp["token_logprobs"].size() == ids.size());
    REQUIRE(lp["tokens"].size() == ids.size());
    REQUIRE(lp["text_offset"].size() == ids.size());
    for (size_t j = 0; j < ids.size(); ++j) {
      CHECK(std::abs(lp["token_logprobs"][j].get<double>() - want[i].logprobs[j]["logprob"].get<double>()) < 1e-9);
      CHECK(lp["top_logprobs"][j].size() <= 2);
      CHECK(lp["token_logprobs"][j].get<double>() <= 0);
    }
  }
  CHECK(distinct.size() > 1);  // the choices differ (by choice index)
  // The same request again: the same tokens (the seed fixes them, whatever the batch around them).
  const json again = post_ok("/v1/completions", body);
  for (size_t i = 0; i < 3; ++i) CHECK(again["choices"][i]["token_ids"] == r["choices"][i]["token_ids"]);
}

TEST_CASE("sampling: penalties, top_k, min_p and logit_bias equal plain sampling, and no seed gets one back") {
  const auto prompt = bytes_of("The sky is");
  json body{{"model", "target"}, {"prompt", prompt}, {"max_tokens", 12}, {"temperature", 1.2}, {"top_k", 20},
            {"min_p", 0.01}, {"presence_penalty", 0.5}, {"frequency_penalty", 0.4}, {"repetition_penalty", 1.1},
            {"logit_bias", {{"101", 5}, {"32", -100}}}, {"return_token_ids", true}};
  const json r = post_ok("/v1/completions", body);
  REQUIRE(r["seed"].is_number_integer());  // a fresh seed, returned so that the result reproduces
  const int64_t seed = r["seed"].get<int64_t>();
  body["seed"] = seed;
  const json again = post_ok("/v1/completions", body);
  CHECK(again["choices"][0]["token_ids"] == r["choices"][0]["token_ids"]);
  const auto ids = r["choices"][0]["token_ids"].get<std::vector<int64_t>>();
  for (int64_t id : ids) CHECK(id != 32);  // banned by logit_bias -100
  const auto want = sampled_oracle(prompt, 12, "--temperature 1.2 --top-k 20 --min-p 0.01 --presence-penalty 0.5 "
                                               "--frequency-penalty 0.4 --repetition-penalty 1.1 --logit-bias 101:5,32:-100 "
                                               "--seed " + std::to_string(seed));
  CHECK(ids == want[0].ids);
}

TEST_CASE("sampling: streaming with n = 3 carries each choice's index and logprobs") {
  const auto prompt = bytes_of("Stream me");
  json body{{"model", "target"}, {"prompt", prompt}, {"max_tokens", 10}, {"temperature", 1.0}, {"seed", 77},
            {"n", 3}, {"logprobs", 1}, {"stream", true}};
  HttpResult s = post(shared_server().port(), "/v1/completions", body);
  REQUIRE(s.status == 200);
  bool done = false;
  std::map<int, std::string> text;
  std::map<int, size_t> lps;
  for (const json& e : sse_events(s.body, &done)) {
    for (const json& ch : e["choices"]) {
      const int i = ch["index"].get<int>();
      text[i] += ch["text"].get<std::string>();
      if (!ch["logprobs"].is_null()) lps[i] += ch["logprobs"]["token_logprobs"].size();
    }
  }
  CHECK(done);
  body["stream"] = false;
  const json plain = post_ok("/v1/completions", body);
  const auto want = sampled_oracle(prompt, 10, "--temperature 1.0 --seed 77 --n 3");
  REQUIRE(text.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(text[i] == plain["choices"][i]["text"].get<std::string>());
    CHECK(lps[i] == want[i].ids.size());
  }
}

TEST_CASE("sampling: chat with logprobs and top_logprobs") {
  json body{{"model", "target"}, {"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})},
            {"max_tokens", 8}, {"temperature", 0.7}, {"seed", 5}, {"logprobs", true}, {"top_logprobs", 3},
            {"return_token_ids", true}};
  const json r = post_ok("/v1/chat/completions", body);
  const json& ch = r["choices"][0];
  const auto ids = ch["token_ids"].get<std::vector<int64_t>>();
  const json& content = ch["logprobs"]["content"];
  REQUIRE(content.size() == ids.size());
  for (const json& c : content) {
    CHECK(c["token"].is_string());
    CHECK(c["logprob"].get<double>() <= 0);
    CHECK(c["bytes"].is_array());
    CHECK(c["top_logprobs"].size() == 3);
  }
  // Plain sampling of the rendered prompt with the same seed: the same tokens.
  const auto want = sampled_oracle(ch["prompt_token_ids"].get<std::vector<int64_t>>(), 8, "--temperature 0.7 --seed 5");
  const size_t n = std::min(ids.size(), want[0].ids.size());
  CHECK(std::vector<int64_t>(ids.begin(), ids.begin() + n) == std::vector<int64_t>(want[0].ids.begin(), want[0].ids.begin() + n));
  // /metrics: acceptance by temperature band.
  const HttpResult m = request(shared_server().port(), "GET", "/metrics");
  CHECK(m.body.find("exspec_spec_decode_num_draft_tokens_by_temperature_total{temperature=\"0.5-1\"}") != std::string::npos);
}

TEST_CASE("sampling: top_p 0 keeps only the most likely token, which is the greedy output") {
  const auto prompt = bytes_of("Edge");
  const json g = post_ok("/v1/completions", {{"model", "target"}, {"prompt", prompt}, {"max_tokens", 8},
                                             {"return_token_ids", true}});
  const json s = post_ok("/v1/completions", {{"model", "target"}, {"prompt", prompt}, {"max_tokens", 8},
                                             {"temperature", 1.5}, {"top_p", 0}, {"return_token_ids", true}});
  CHECK(s["choices"][0]["token_ids"] == g["choices"][0]["token_ids"]);
}
