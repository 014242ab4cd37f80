// What the field's own clients send (issue 37): vLLM's stop extensions (ignore_eos, min_tokens,
// stop_token_ids, include_stop_str_in_output, skip_special_tokens), requests without "model",
// and the /tokenize and /detokenize endpoints. The shared server speculates (exspec, K 3,
// float64): every output must equal plain decoding with the same rules (`exspec generate
// --oracle` with --ignore-eos / --min-tokens / --stop-token-ids).
#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

constexpr int64_t kEos = 257;  // the generated models' </s>

json post_ok(const std::string& path, const json& body) {
  HttpResult r = post(shared_server().port(), path, body);
  INFO(path << " " << body.dump() << " -> " << r.body);
  REQUIRE(r.status == 200);
  return r.json_body();
}

std::vector<int64_t> ids_of(const json& r) { return r["choices"][0]["token_ids"].get<std::vector<int64_t>>(); }

}  // namespace

TEST_CASE("field tools: ignore_eos runs past EOS to max_tokens, equal to plain sampling with the same rule") {
  const auto prompt = bytes_of("The end is near");
  // EOS made likely (logit_bias) and sampled: without ignore_eos the sequence stops at its first EOS.
  json body{{"prompt", prompt}, {"max_tokens", 24}, {"temperature", 1.0}, {"seed", 9},
            {"logit_bias", {{std::to_string(kEos), 3}}}, {"return_token_ids", true}};
  const json stopped = post_ok("/v1/completions", body);
  const auto first = ids_of(stopped);
  REQUIRE(stopped["choices"][0]["finish_reason"] == "stop");
  REQUIRE(first.back() == kEos);
  REQUIRE(first.size() < 24);
  body["ignore_eos"] = true;
  const json r = post_ok("/v1/completions", body);
  const auto ids = ids_of(r);
  CHECK(ids.size() == 24);
  CHECK(r["choices"][0]["finish_reason"] == "length");
  CHECK(std::vector<int64_t>(ids.begin(), ids.begin() + first.size()) == first);  // the same draws up to EOS
  const auto want = sampled_oracle(prompt, 24, "--temperature 1.0 --seed 9 --logit-bias 257:3 --ignore-eos");
  CHECK(ids == want.at(0).ids);
}

TEST_CASE("field tools: min_tokens masks EOS until reached, greedy and sampled, as plain decoding") {
  const auto prompt = bytes_of("Short");
  // EOS would be chosen at once: with min_tokens 5 it comes as the 6th token.
  json body{{"prompt", prompt}, {"max_tokens", 16}, {"min_tokens", 5}, {"logit_bias", {{std::to_string(kEos), 100}}},
            {"return_token_ids", true}};
  const auto ids = ids_of(post_ok("/v1/completions", body));
  REQUIRE(ids.size() == 6);
  for (size_t i = 0; i < 5; ++i) CHECK(ids[i] != kEos);
  CHECK(ids[5] == kEos);
  CHECK(ids == sampled_oracle(prompt, 16, "--logit-bias 257:100 --min-tokens 5").at(0).ids);
  body["temperature"] = 0.9, body["seed"] = 3, body["logit_bias"] = {{std::to_string(kEos), 2}}, body["min_tokens"] = 10;
  const auto sampled = ids_of(post_ok("/v1/completions", body));
  CHECK(sampled.size() >= 10);
  CHECK(sampled == sampled_oracle(prompt, 16, "--temperature 0.9 --seed 3 --logit-bias 257:2 --min-tokens 10").at(0).ids);
  // Stop strings count from min_tokens on too.
  const json plain = post_ok("/v1/completions", {{"prompt", "Once"}, {"max_tokens", 12}, {"return_token_ids", true}});
  const std::string text = plain["choices"][0]["text"];
  REQUIRE(text.size() >= 3);
  const json held = post_ok("/v1/completions", {{"prompt", "Once"}, {"max_tokens", 12}, {"min_tokens", 12},
                                               {"stop", text.substr(0, 1)}});
  CHECK(held["choices"][0]["text"] == text);  // the stop string came before min_tokens: ignored
  HttpResult bad = post(shared_server().port(), "/v1/completions", {{"prompt", "x"}, {"max_tokens", 4}, {"min_tokens", 5}});
  CHECK(bad.status == 400);
  CHECK(bad.json_body()["error"]["param"] == "min_tokens");
}

TEST_CASE("field tools: stop_token_ids end the sequence at the id, as plain decoding does") {
  const auto prompt = bytes_of("Counting: one two three");
  const auto plain = oracle({prompt}, 16).at(0).ids;
  REQUIRE(plain.size() > 6);
  const int64_t stop = plain[5];
  const size_t at = static_cast<size_t>(std::find(plain.begin(), plain.end(), stop) - plain.begin());
  const json r = post_ok("/v1/completions", {{"prompt", prompt}, {"max_tokens", 16}, {"stop_token_ids", {stop}},
                                             {"return_token_ids", true}});
  CHECK(ids_of(r) == std::vector<int64_t>(plain.begin(), plain.begin() + at + 1));
  CHECK(r["choices"][0]["finish_reason"] == "stop");
  CHECK(ids_of(r) == sampled_oracle(prompt, 16, "--stop-token-ids " + std::to_string(stop)).at(0).ids);
  HttpResult bad = post(shared_server().port(), "/v1/completions", {{"prompt", "x"}, {"stop_token_ids", {999}}});
  CHECK(bad.status == 400);
  CHECK(bad.json_body()["error"]["param"] == "stop_token_ids");
}

TEST_CASE("field tools: include_stop_str_in_output keeps the stop string, skip_special_tokens false keeps </s>") {
  const json plain = post_ok("/v1/completions", {{"prompt", "Hello there"}, {"max_tokens", 16}});
  const std::string text = plain["choices"][0]["text"];
  // The stop string: the text's second character (whole: UTF-8 lead byte and continuation bytes).
  auto char_len = [&](size_t i) {
    const auto c = static_cast<unsigned char>(text[i]);
    return size_t(c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2);
  };
  REQUIRE(text.size() >= 2);
  const size_t second = char_len(0);
  REQUIRE(second < text.size());
  const std::string stop = text.substr(second, char_len(second));
  const size_t at = text.find(stop);
  for (bool stream : {false, true}) {
    json body{{"prompt", "Hello there"}, {"max_tokens", 16}, {"stop", stop}, {"include_stop_str_in_output", true}};
    if (stream) body["stream"] = true;
    HttpResult r = post(shared_server().port(), "/v1/completions", body);
    REQUIRE(r.status == 200);
    std::string got;
    if (!stream) got = r.json_body()["choices"][0]["text"];
    for (const json& e : stream ? sse_events(r.body) : std::vector<json>{}) got += e["choices"][0]["text"].get<std::string>();
    CHECK(got == text.substr(0, at + stop.size()));
  }
  json eos{{"prompt", "x"}, {"max_tokens", 2}, {"ignore_eos", true}, {"logit_bias", {{std::to_string(kEos), 100}}}};
  CHECK(post_ok("/v1/completions", eos)["choices"][0]["text"] == "");
  eos["skip_special_tokens"] = false;
  CHECK(post_ok("/v1/completions", eos)["choices"][0]["text"] == "</s></s>");
}

TEST_CASE("field tools: exspec generate's text leaves out the EOS that ended it, as the server's does") {
  // The trained demo pair answers this prompt greedily (its generation_config.json's sampling
  // off) with a few tokens and </s>.
  const std::string demo = std::string(HTTP_TEST_DIR) + "/../../demo";
  int st = 0;
  const json j = json::parse(run_capture(std::string(EXSPEC_BIN) + " generate --model " + demo + "/target --draft " +
                                         demo + "/draft --generation-config none --max-tokens 80 --prompt 'Q: Why?' 2>/dev/null", &st));
  REQUIRE(st == 0);
  REQUIRE(j["finish_reason"] == "stop");
  const std::string text = j["text"];
  CHECK(text.find("</s>") == std::string::npos);
  CHECK_FALSE(text.empty());
}

TEST_CASE("field tools: the model field may be left out, an unknown model is still a 404") {
  const json body{{"prompt", "Hi"}, {"max_tokens", 8}};
  json with = body;
  with["model"] = "target";
  CHECK(post_ok("/v1/completions", body)["choices"][0]["text"] == post_ok("/v1/completions", with)["choices"][0]["text"]);
  const json chat = post_ok("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 4}});
  CHECK(chat["model"] == "target");
  with["model"] = "nope";
  CHECK(post(shared_server().port(), "/v1/completions", with).status == 404);
}

TEST_CASE("field tools: /tokenize and /detokenize in vLLM's shapes round-trip, chat as the chat endpoint counts") {
  const json t = post_ok("/tokenize", {{"prompt", "Hello, world"}, {"add_special_tokens", false}});
  CHECK(t["tokens"] == bytes_of("Hello, world"));
  CHECK(t["count"] == 12);
  CHECK(t["max_model_len"].is_number_integer());
  CHECK(post_ok("/detokenize", {{"tokens", t["tokens"]}})["prompt"] == "Hello, world");
  // add_special_tokens defaults to true: the prompt as the completions endpoint tokenizes it.
  const json as_served = post_ok("/tokenize", {{"model", "target"}, {"prompt", "Hello, world"}});
  CHECK(as_served["count"] == post_ok("/v1/completions", {{"prompt", "Hello, world"}, {"max_tokens", 1}})["usage"]["prompt_tokens"]);
  const json msgs = {{{"role", "user"}, {"content", "Hi"}}};
  const json chat = post_ok("/v1/chat/completions", {{"messages", msgs}, {"max_tokens", 2}});
  CHECK(post_ok("/tokenize", {{"messages", msgs}})["count"] == chat["usage"]["prompt_tokens"]);
  HttpResult bad = post(shared_server().port(), "/detokenize", {{"tokens", {1, 99999}}});
  CHECK(bad.status == 400);
  CHECK(bad.json_body()["error"]["param"] == "tokens");
  CHECK(post(shared_server().port(), "/tokenize", {{"prompt", "x"}, {"bogus", 1}}).status == 400);
  CHECK(request(shared_server().port(), "GET", "/tokenize").status == 405);
}

TEST_CASE("field tools: usage.completion_tokens_details counts this request's drafts, streamed too") {
  const int port = shared_server().port();
  const char* drafts = "exspec_spec_decode_num_draft_tokens_total";
  const char* accepted = "exspec_spec_decode_num_accepted_tokens_total";
  for (bool stream : {false, true}) {
    CAPTURE(stream);
    const auto before = metrics(port, {drafts, accepted});
    json body{{"prompt", "Once upon a time"}, {"max_tokens", 24}};
    if (stream) body["stream"] = true, body["stream_options"] = {{"include_usage", true}};
    HttpResult r = post(port, "/v1/completions", body);
    REQUIRE(r.status == 200);
    const json usage = stream ? sse_events(r.body).back()["usage"] : r.json_body()["usage"];
    const auto after = metrics(port, {drafts, accepted});
    const json& d = usage["completion_tokens_details"];
    const int64_t acc = d["accepted_prediction_tokens"], rej = d["rejected_prediction_tokens"];
    CHECK(acc + rej == static_cast<int64_t>(after[0] - before[0]));  // every draft of this request, once
    CHECK(acc == static_cast<int64_t>(after[1] - before[1]));
    CHECK(acc + rej > 0);
  }
}

TEST_CASE("field tools: echo with logprobs scores the prompt with the target's logprobs, first token null") {
  // The prompt is the oracle's own greedy continuation: the prefill's logprob of each of those
  // tokens must equal what plain decoding reported when it chose them.
  const auto prompt = bytes_of("Once upon a time");
  const auto gen = sampled_oracle(prompt, 8, "--logprobs 2").at(0);
  std::vector<int64_t> full = prompt;
  full.insert(full.end(), gen.ids.begin(), gen.ids.end());
  for (int64_t max_tokens : {0, 3}) {
    CAPTURE(max_tokens);
    const json r = post_ok("/v1/completions", {{"prompt", full}, {"max_tokens", max_tokens}, {"echo", true}, {"logprobs", 2}});
    const json& lp = r["choices"][0]["logprobs"];
    REQUIRE(lp["token_logprobs"].size() == full.size() + static_cast<size_t>(max_tokens));
    REQUIRE(lp["text_offset"].size() == lp["token_logprobs"].size());
    CHECK(lp["token_logprobs"][0].is_null());
    CHECK(lp["top_logprobs"][0].is_null());
    for (size_t k = 0; k < gen.ids.size(); ++k) {
      const json& want = gen.logprobs[k];
      const size_t at = prompt.size() + k;
      CHECK(std::abs(lp["token_logprobs"][at].get<double>() - want["logprob"].get<double>()) < 1e-9);
      // top_logprobs is keyed by token text (OpenAI's shape): byte tokens that are not UTF-8 on
      // their own all read as U+FFFD and share a key, so only the count is checked here.
      CHECK(lp["top_logprobs"][at].is_object());
      CHECK(lp["top_logprobs"][at].size() >= 1);
      CHECK(lp["top_logprobs"][at].size() <= 2);
    }
    for (size_t k = 1; k < lp["text_offset"].size(); ++k) CHECK(lp["text_offset"][k] >= lp["text_offset"][k - 1]);
    // Streamed, the echoed prompt is the first chunk, with the same entries (the engine's
    // prefill sends them before any token).
    HttpResult s = post(shared_server().port(), "/v1/completions",
                        {{"prompt", full}, {"max_tokens", max_tokens}, {"echo", true}, {"logprobs", 2}, {"stream", true}});
    REQUIRE(s.status == 200);
    const auto events = sse_events(s.body);
    REQUIRE(!events.empty());
    const json& first = events[0]["choices"][0];
    const std::string echoed = first["text"];
    CHECK(!echoed.empty());
    CHECK(r["choices"][0]["text"].get<std::string>().rfind(echoed, 0) == 0);
    REQUIRE(first["logprobs"]["token_logprobs"].size() == full.size());
    CHECK(first["logprobs"]["token_logprobs"][0].is_null());
    for (size_t k = 1; k < full.size(); ++k)
      CHECK(std::abs(first["logprobs"]["token_logprobs"][k].get<double>() - lp["token_logprobs"][k].get<double>()) < 1e-12);
  }
}
