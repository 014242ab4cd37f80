// Drafts without a draft model over HTTP (issue 31): OpenAI's Predicted Outputs (`prediction`)
// on both endpoints, beside the draft model and without one, and `--speculate ngram` (prompt
// lookup). Every answer must be plain decoding's (`exspec generate --oracle`), whatever was
// proposed; usage and /metrics count the proposals.
#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

json completion(int port, const json& body) {
  HttpResult r = post(port, "/v1/completions", body);
  INFO(body.dump() << " -> " << r.body);
  REQUIRE(r.status == 200);
  return r.json_body();
}

std::vector<int64_t> ids_of(const json& r) { return r["choices"][0]["token_ids"].get<std::vector<int64_t>>(); }

json prediction_of(const json& content) { return json{{"type", "content"}, {"content", content}}; }

// The answer with and without predictions of three qualities; usage counts what was verified.
void check_predictions(int port) {
  const auto prompt = bytes_of("Predict this");
  const auto want = oracle({prompt}, 24).at(0).ids;
  std::vector<int64_t> wrong(want.size(), 120);  // the answer has none of it
  std::vector<int64_t> edited = want;            // one token changed, one dropped: re-aligned
  edited[10] = (edited[10] + 1) % 256, edited.erase(edited.begin() + 3);
  int64_t exact_accepted = 0;
  for (const auto& pred : {want, edited, wrong}) {
    const char* drafts = "exspec_spec_decode_num_draft_tokens_total";
    const auto before = metrics(port, {drafts});
    const json r = completion(port, {{"prompt", prompt}, {"max_tokens", 24}, {"return_token_ids", true},
                                     {"prediction", prediction_of(pred)}});
    CHECK(ids_of(r) == want);
    const json& d = r["usage"]["completion_tokens_details"];
    const int64_t acc = d["accepted_prediction_tokens"], rej = d["rejected_prediction_tokens"];
    CHECK(acc + rej == static_cast<int64_t>(metrics(port, {drafts})[0] - before[0]));
    if (pred == want) exact_accepted = acc;
  }
  CHECK(exact_accepted >= 16);  // most of an exact prediction goes through in long steps
}

}  // namespace

TEST_CASE("predictions: verified beside the draft model, the answer plain decoding's, usage counting them") {
  check_predictions(shared_server().port());
}

TEST_CASE("predictions: without a draft model, plain steps verify the client's prediction") {
  ServerProcess s({"--draft", ""});
  const json m = request(s.port(), "GET", "/v1/models").json_body();
  CHECK(m["data"][0]["settings"]["speculate"] == "none");
  check_predictions(s.port());
  CHECK(metric(s.port(), "exspec_spec_decode_num_draft_tokens_by_proposer_total{proposer=\"model\"}") == 0);
  CHECK(metric(s.port(), "exspec_spec_decode_num_accepted_tokens_by_proposer_total{proposer=\"prediction\"}") > 0);
  // Chat, streamed, the prediction as text parts: the same answer as without it.
  const json msgs = {{{"role", "user"}, {"content", "Say something"}}};
  json body{{"messages", msgs}, {"max_tokens", 12}, {"stream", true}, {"stream_options", {{"include_usage", true}}}};
  auto text_of = [](const std::vector<json>& events) {
    std::string t;
    for (const json& e : events)
      if (!e["choices"].empty() && e["choices"][0]["delta"].contains("content")) t += e["choices"][0]["delta"]["content"];
    return t;
  };
  const std::string plain = text_of(sse_events(post(s.port(), "/v1/chat/completions", body).body));
  body["prediction"] = prediction_of(json::array({{{"type", "text"}, {"text", plain.substr(0, plain.size() / 2)}},
                                                  {{"type", "text"}, {"text", plain.substr(plain.size() / 2)}}}));
  const auto events = sse_events(post(s.port(), "/v1/chat/completions", body).body);
  CHECK(text_of(events) == plain);
  CHECK(events.back()["usage"]["completion_tokens_details"]["accepted_prediction_tokens"] > 0);
}

TEST_CASE("predictions: a malformed prediction is a 400 naming it") {
  const int port = shared_server().port();
  for (const json& bad : {json("text"), json{{"type", "text"}, {"content", "x"}}, json{{"type", "content"}},
                          json{{"type", "content"}, {"content", 5}}, json{{"type", "content"}, {"content", {1, 99999}}},
                          json{{"type", "content"}, {"content", "x"}, {"extra", 1}},
                          json{{"type", "content"}, {"content", {{{"type", "image"}}}}}}) {
    CAPTURE(bad.dump());
    HttpResult r = post(port, "/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 2}, {"prediction", bad}});
    CHECK(r.status == 400);
    CHECK(r.json_body()["error"]["param"] == "prediction");
  }
}

TEST_CASE("speculate ngram: prompt lookup without a draft model, every answer the oracle's") {
  {
    ServerProcess refused({"--speculate", "ngram"}, /*wait_ready=*/false);  // with --draft: refused
    CHECK(refused.wait_exit(60) != 0);
    CHECK(refused.log().find("speculate ngram") != std::string::npos);
  }
  ServerProcess s({"--draft", "", "--speculate", "ngram"});
  CHECK(request(s.port(), "GET", "/v1/models").json_body()["data"][0]["settings"]["speculate"] == "ngram");
  // Text that repeats itself, and text that does not.
  for (const std::string& text : {std::string("one two three one two three one two three one two"),
                                  std::string("The quick brown fox jumps over the lazy dog")}) {
    const auto prompt = bytes_of(text);
    const json r = completion(s.port(), {{"prompt", prompt}, {"max_tokens", 32}, {"return_token_ids", true}});
    CHECK(ids_of(r) == oracle({prompt}, 32).at(0).ids);
  }
  CHECK(metric(s.port(), "exspec_spec_decode_num_draft_tokens_by_proposer_total{proposer=\"ngram\"}") > 0);
  CHECK(metric(s.port(), "exspec_spec_decode_num_draft_tokens_by_proposer_total{proposer=\"model\"}") == 0);
}
