// Completions and chat against a real server: plain, streaming, echo, stop strings, token-id
// prompts, arrays of prompts; every output compared with the float64 greedy oracle.
#include <filesystem>
#include <future>

#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (int k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += n;
  }
  return true;
}

// The text the server should return for generated ids: the bytes, without <s>/</s>.
std::string text_of(const std::vector<int64_t>& ids) {
  std::string s;
  for (int64_t id : ids)
    if (id < 256) s += static_cast<char>(id);
  return s;
}

json completion(const json& body) {
  HttpResult r = post(shared_server().port(), "/v1/completions", body);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json_body();
}

std::string model_name() { return "target"; }

}  // namespace

TEST_CASE("health, models and metrics") {
  const int port = shared_server().port();
  HttpResult h = request(port, "GET", "/health");
  CHECK(h.status == 200);
  CHECK(h.json_body()["status"] == "ok");
  HttpResult m = request(port, "GET", "/v1/models");
  REQUIRE(m.status == 200);
  json mj = m.json_body();
  CHECK(mj["object"] == "list");
  REQUIRE(mj["data"].size() == 1);
  CHECK(mj["data"][0]["id"] == model_name());
  CHECK(mj["data"][0]["object"] == "model");
  CHECK(mj["data"][0]["settings"]["mode"] == "inplace");  // the default with a draft
  CHECK(mj["data"][0]["settings"]["draft_tokens"] == 3);
  CHECK(mj["data"][0]["settings"]["dtype"] == "float64");
  // Names, never the server's paths (issue 34): the log keeps those.
  CHECK(mj["data"][0]["root"] == model_name());
  CHECK(mj["data"][0]["draft"]["name"] == std::filesystem::path(models().draft).filename().string());
  HttpResult one = request(port, "GET", "/v1/models/target");
  CHECK(one.status == 200);
  for (const std::string& body : {m.body, one.body})
    for (const std::string& dir : {models().target, models().draft, std::filesystem::path(models().target).parent_path().string()})
      CHECK(body.find(dir) == std::string::npos);
  CHECK(request(port, "GET", "/v1/models/nope").status == 404);
  completion({{"model", "target"}, {"prompt", "metrics"}, {"max_tokens", 4}});
  HttpResult x = request(port, "GET", "/metrics");
  REQUIRE(x.status == 200);
  CHECK(x.headers["content-type"].find("text/plain") == 0);
  for (const char* name :
       {"exspec_http_requests_total{endpoint=\"/v1/completions\",code=\"200\"}", "exspec_prompt_tokens_total",
        "exspec_generation_tokens_total", "exspec_queue_depth", "exspec_active_sequences", "exspec_acceptance_rate",
        "exspec_tokens_per_verification", "exspec_grouping_rate", "exspec_alignment_seconds_total",
        "exspec_draft_seconds_total", "exspec_verify_seconds_total", "exspec_spec_decode_num_draft_tokens_total",
        "exspec_http_request_duration_seconds_bucket{endpoint=\"/v1/completions\",le=\"+Inf\"}",
        "exspec_server_overhead_seconds_count", "exspec_time_to_first_token_seconds_count"})
    CHECK(x.body.find(name) != std::string::npos);
  CHECK(metric(port, "exspec_spec_decode_num_draft_tokens_total") > 0);
}

TEST_CASE("completions: a text prompt equals the float64 oracle, plain and streamed") {
  const std::string prompt = "The quick brown fox";
  const auto want = oracle({bytes_of(prompt)}, 40)[0];
  json r = completion({{"model", "target"}, {"prompt", prompt}, {"max_tokens", 40}, {"return_token_ids", true}});
  CHECK(r["object"] == "text_completion");
  CHECK(r["model"] == "target");
  CHECK(r["id"].get<std::string>().rfind("cmpl-", 0) == 0);
  REQUIRE(r["choices"].size() == 1);
  const json& c = r["choices"][0];
  CHECK(c["index"] == 0);
  CHECK(c["token_ids"].get<std::vector<int64_t>>() == want.ids);
  CHECK(c["prompt_token_ids"].get<std::vector<int64_t>>() == bytes_of(prompt));
  CHECK(c["finish_reason"] == want.finish);
  CHECK(c["logprobs"].is_null());
  const std::string text = c["text"];
  if (valid_utf8(text_of(want.ids))) CHECK(text == text_of(want.ids));
  CHECK(r["usage"]["prompt_tokens"] == prompt.size());
  CHECK(r["usage"]["completion_tokens"] == want.ids.size());
  CHECK(r["usage"]["total_tokens"] == prompt.size() + want.ids.size());

  HttpResult s = post(shared_server().port(), "/v1/completions",
                      {{"model", "target"}, {"prompt", prompt}, {"max_tokens", 40}, {"stream", true},
                       {"stream_options", {{"include_usage", true}}}});
  REQUIRE(s.status == 200);
  CHECK(s.headers["content-type"] == "text/event-stream");
  bool done = false;
  auto events = sse_events(s.body, &done);
  CHECK(done);
  REQUIRE(events.size() >= 2);
  std::string streamed;
  std::string finish;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    CHECK(events[i]["object"] == "text_completion");
    CHECK(events[i].contains("usage"));
    CHECK(events[i]["usage"].is_null());
    streamed += events[i]["choices"][0]["text"].get<std::string>();
    if (!events[i]["choices"][0]["finish_reason"].is_null()) finish = events[i]["choices"][0]["finish_reason"];
  }
  CHECK(streamed == text);
  CHECK(finish == want.finish);
  const json& last = events.back();
  CHECK(last["choices"].empty());
  CHECK(last["usage"]["completion_tokens"] == want.ids.size());
}

TEST_CASE("completions: token-id prompts and arrays of prompts") {
  const std::vector<std::vector<int64_t>> prompts{{256, 72, 105}, {256, 49, 44, 50, 44, 51, 44}, bytes_of("Why?")};
  const auto want = oracle(prompts, 24);
  json r = completion({{"model", "target"},
                       {"prompt", json::array({prompts[0], prompts[1], "Why?"})},
                       {"max_tokens", 24},
                       {"return_token_ids", true}});
  REQUIRE(r["choices"].size() == 3);
  int64_t total = 0;
  for (size_t i = 0; i < 3; ++i) {
    CHECK(r["choices"][i]["index"] == i);
    CHECK(r["choices"][i]["token_ids"].get<std::vector<int64_t>>() == want[i].ids);
    CHECK(r["choices"][i]["finish_reason"] == want[i].finish);
    total += static_cast<int64_t>(want[i].ids.size());
  }
  CHECK(r["usage"]["completion_tokens"] == total);
  // A single token-id prompt.
  json one = completion({{"model", "target"}, {"prompt", prompts[1]}, {"max_tokens", 24}, {"return_token_ids", true}});
  CHECK(one["choices"][0]["token_ids"].get<std::vector<int64_t>>() == want[1].ids);
  // max_tokens 0 with echo gives the prompt back.
  json zero = completion({{"model", "target"}, {"prompt", "Why?"}, {"max_tokens", 0}, {"echo", true}});
  CHECK(zero["choices"][0]["text"] == "Why?");
  CHECK(zero["choices"][0]["finish_reason"] == "length");
}

TEST_CASE("completions: echo, plain and streamed") {
  const std::string prompt = "Echo this:";
  const auto want = oracle({bytes_of(prompt)}, 16)[0];
  json r = completion({{"model", "target"}, {"prompt", prompt}, {"max_tokens", 16}, {"echo", true}});
  const std::string text = r["choices"][0]["text"];
  REQUIRE(text.rfind(prompt, 0) == 0);
  if (valid_utf8(text_of(want.ids))) CHECK(text == prompt + text_of(want.ids));
  HttpResult s = post(shared_server().port(), "/v1/completions",
                      {{"model", "target"}, {"prompt", prompt}, {"max_tokens", 16}, {"echo", true}, {"stream", true}});
  REQUIRE(s.status == 200);
  std::string streamed;
  for (const auto& e : sse_events(s.body)) streamed += e["choices"][0]["text"].get<std::string>();
  CHECK(streamed == text);
}

TEST_CASE("completions: stop strings trim the text and end the sequence") {
  const std::string prompt = "Once upon a time";
  const auto want = oracle({bytes_of(prompt)}, 60)[0];
  const std::string full = text_of(want.ids);
  // A stop string of printable ASCII bytes from the first half of the greedy output (two bytes
  // when there are, else one).
  std::string stop;
  auto printable = [&](size_t i) { return full[i] > 0x20 && static_cast<unsigned char>(full[i]) < 0x7f; };
  for (size_t len : {2, 1})
    for (size_t i = 4; i + len <= full.size() / 2 && stop.empty(); ++i)
      if (printable(i) && (len == 1 || printable(i + 1))) stop = full.substr(i, len);
  REQUIRE_FALSE(stop.empty());
  const std::string expect = full.substr(0, full.find(stop));
  INFO("stop = \"" << stop << "\"");
  const double committed_before = metric(shared_server().port(), "exspec_committed_tokens_total");
  json r = completion({{"model", "target"}, {"prompt", prompt}, {"max_tokens", 60}, {"stop", json::array({stop, "\x01\x02"})},
                       {"return_token_ids", true}});
  const json& c = r["choices"][0];
  CHECK(c["finish_reason"] == "stop");
  if (valid_utf8(expect)) CHECK(c["text"] == expect);
  // The counted tokens are the oracle's, up to the one that completed the stop string.
  const auto ids = c["token_ids"].get<std::vector<int64_t>>();
  REQUIRE(ids.size() <= want.ids.size());
  CHECK(std::equal(ids.begin(), ids.end(), want.ids.begin()));
  CHECK(text_of(ids).find(stop) != std::string::npos);
  CHECK(r["usage"]["completion_tokens"] == ids.size());
  // The sequence was cut short in the engine (cancelled at the next step boundary), not run to 60.
  CHECK(metric(shared_server().port(), "exspec_committed_tokens_total") - committed_before <
        static_cast<double>(want.ids.size()));

  HttpResult s = post(shared_server().port(), "/v1/completions",
                      {{"model", "target"}, {"prompt", prompt}, {"max_tokens", 60}, {"stop", stop}, {"stream", true}});
  REQUIRE(s.status == 200);
  std::string streamed, finish;
  for (const auto& e : sse_events(s.body)) {
    streamed += e["choices"][0]["text"].get<std::string>();
    if (!e["choices"][0]["finish_reason"].is_null()) finish = e["choices"][0]["finish_reason"];
  }
  CHECK(streamed == c["text"].get<std::string>());
  CHECK(finish == "stop");
}

TEST_CASE("chat completions: plain and streamed, through the ChatML default template") {
  const json messages = json::array({{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi there"}}});
  const std::string rendered =
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n";
  const auto want = oracle({bytes_of(rendered)}, 30)[0];
  std::string expect = text_of(want.ids);
  const bool cut = expect.find("<|im_end|>") != std::string::npos;
  if (cut) expect.resize(expect.find("<|im_end|>"));
  HttpResult p = post(shared_server().port(), "/v1/chat/completions",
                      {{"model", "target"}, {"messages", messages}, {"max_tokens", 30}, {"return_token_ids", true}});
  INFO(p.body);
  REQUIRE(p.status == 200);
  json r = p.json_body();
  CHECK(r["object"] == "chat.completion");
  CHECK(r["id"].get<std::string>().rfind("chatcmpl-", 0) == 0);
  const json& c = r["choices"][0];
  CHECK(c["message"]["role"] == "assistant");
  CHECK(c["prompt_token_ids"].get<std::vector<int64_t>>() == bytes_of(rendered));
  if (!cut) CHECK(c["token_ids"].get<std::vector<int64_t>>() == want.ids);
  if (!cut) CHECK(c["finish_reason"] == want.finish);
  if (valid_utf8(expect)) CHECK(c["message"]["content"] == expect);
  CHECK(r["usage"]["prompt_tokens"] == rendered.size());

  HttpResult s = post(shared_server().port(), "/v1/chat/completions",
                      {{"model", "target"}, {"messages", messages}, {"max_tokens", 30}, {"stream", true},
                       {"stream_options", {{"include_usage", true}}}});
  REQUIRE(s.status == 200);
  bool done = false;
  auto events = sse_events(s.body, &done);
  CHECK(done);
  REQUIRE(events.size() >= 3);
  CHECK(events[0]["object"] == "chat.completion.chunk");
  CHECK(events[0]["choices"][0]["delta"]["role"] == "assistant");
  std::string streamed, finish;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const json& d = events[i]["choices"][0]["delta"];
    if (d.contains("content")) streamed += d["content"].get<std::string>();
    if (!events[i]["choices"][0]["finish_reason"].is_null()) finish = events[i]["choices"][0]["finish_reason"];
  }
  CHECK(streamed == c["message"]["content"].get<std::string>());
  CHECK(finish == c["finish_reason"].get<std::string>());
  CHECK(events.back()["usage"]["total_tokens"] == r["usage"]["total_tokens"]);
}

TEST_CASE("draft_tokens auto: the oracle's tokens, and the policy's estimates on /metrics") {
  ServerProcess s({"--draft-tokens", "auto", "--max-draft-tokens", "5"});
  const std::string prompt = "Adaptive speculation";
  const auto want = oracle({bytes_of(prompt)}, 30)[0];
  HttpResult r = post(s.port(), "/v1/completions",
                      {{"model", "target"}, {"prompt", prompt}, {"max_tokens", 30}, {"return_token_ids", true}});
  REQUIRE(r.status == 200);
  CHECK(r.json_body()["choices"][0]["token_ids"].get<std::vector<int64_t>>() == want.ids);
  HttpResult m = request(s.port(), "GET", "/v1/models");
  CHECK(m.json_body()["data"][0]["settings"]["draft_tokens"] == "auto");
  HttpResult x = request(s.port(), "GET", "/metrics");
  for (const char* name : {"exspec_adaptive_acceptance_estimate", "exspec_adaptive_last_draft_tokens",
                           "exspec_adaptive_cost_coefficient_seconds{phase=\"verify\",term=\"token\"}",
                           "exspec_draft_length_steps_total{k=\"0\"}", "draft_tokens=\"auto\""})
    CHECK(x.body.find(name) != std::string::npos);
  const double a = metric(s.port(), "exspec_adaptive_acceptance_estimate");
  CHECK(a >= 0.0);
  CHECK(a <= 1.0);
  // Sampled under auto K: plain sampling's tokens; the estimates are kept per temperature band.
  HttpResult hot = post(s.port(), "/v1/completions",
                        {{"model", "target"}, {"prompt", prompt}, {"max_tokens", 30}, {"temperature", 1.5},
                         {"seed", 9}, {"return_token_ids", true}});
  REQUIRE(hot.status == 200);
  CHECK(hot.json_body()["choices"][0]["token_ids"].get<std::vector<int64_t>>() ==
        sampled_oracle(bytes_of(prompt), 30, "--temperature 1.5 --seed 9")[0].ids);
  HttpResult y = request(s.port(), "GET", "/metrics");
  CHECK(y.body.find("exspec_adaptive_acceptance_estimate_by_temperature{temperature=\"1-2\"}") != std::string::npos);
}

TEST_CASE("serving without a draft: in place with plain steps, every answer the oracle's") {
  ServerProcess s({"--draft", ""});  // the last --draft wins: none
  const json m = request(s.port(), "GET", "/v1/models").json_body();
  CHECK(m["data"][0]["settings"]["mode"] == "inplace");
  CHECK(m["data"][0]["draft"].is_null());
  CHECK(m["data"][0]["settings"]["draft_tokens"] == 0);  // K = 0: every step plain
  std::vector<std::vector<int64_t>> prompts;
  for (int i = 0; i < 6; ++i) prompts.push_back(bytes_of("Plain request " + std::to_string(i) + std::string(i * 3, '!')));
  const auto want = oracle(prompts, 16);
  // Sent together: they share the in-place batch, joining it as they arrive.
  std::vector<std::future<HttpResult>> answers;
  for (const auto& p : prompts)
    answers.push_back(std::async(std::launch::async, [&, p] {
      return post(s.port(), "/v1/completions", {{"prompt", p}, {"max_tokens", 16}, {"return_token_ids", true}});
    }));
  for (size_t i = 0; i < prompts.size(); ++i) {
    HttpResult r = answers[i].get();
    REQUIRE(r.status == 200);
    CHECK(r.json_body()["choices"][0]["token_ids"].get<std::vector<int64_t>>() == want[i].ids);
  }
  CHECK(metric(s.port(), "exspec_spec_decode_num_draft_tokens_total") == 0);
}
