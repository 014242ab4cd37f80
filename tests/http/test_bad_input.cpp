// The bad-input table: each malformed request gets the right status and an OpenAI error object,
// and the server keeps serving afterwards.
#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

struct Bad {
  const char* what;
  std::string method, path, body;
  int status;
  const char* code;   // expected error.code ("" = not checked)
  const char* param;  // expected error.param ("" = not checked)
};

std::string completion(json extra) {
  json b{{"model", "target"}, {"prompt", "Hello"}, {"max_tokens", 4}};
  for (auto it = extra.begin(); it != extra.end(); ++it) {
    if (it.value().is_string() && it.value() == "<remove>") b.erase(it.key());
    else b[it.key()] = it.value();
  }
  return b.dump();
}

std::string chat(json extra) {
  json b{{"model", "target"}, {"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})}, {"max_tokens", 4}};
  for (auto it = extra.begin(); it != extra.end(); ++it) b[it.key()] = it.value();
  return b.dump();
}

}  // namespace

TEST_CASE("bad input table: right status, OpenAI error object, server keeps serving") {
  const int port = shared_server().port();
  const std::string C = "/v1/completions", CH = "/v1/chat/completions";
  std::vector<Bad> table{
      {"malformed JSON", "POST", C, "{\"model\": \"target\", \"prompt\": ", 400, "invalid_json", ""},
      {"body not an object", "POST", C, "[1, 2]", 400, "invalid_body", ""},
      // A missing model is served (the one model, issue 37: http:field tools); a wrong type is not.
      {"model not a string", "POST", C, completion({{"model", 5}}), 400, "invalid_type", "model"},
      {"unknown model", "POST", C, completion({{"model", "gpt-4"}}), 404, "model_not_found", "model"},
      {"missing prompt", "POST", C, completion({{"prompt", "<remove>"}}), 400, "missing_required_parameter", "prompt"},
      {"prompt of the wrong type", "POST", C, completion({{"prompt", 42}}), 400, "invalid_type", "prompt"},
      {"prompt array of objects", "POST", C, completion({{"prompt", json::array({json::object()})}}), 400,
       "invalid_type", "prompt"},
      {"empty prompt", "POST", C, completion({{"prompt", ""}}), 400, "", "prompt"},
      {"empty prompt array", "POST", C, completion({{"prompt", json::array()}}), 400, "", "prompt"},
      {"token id outside the vocabulary", "POST", C, completion({{"prompt", {1, 2, 999}}}), 400, "", "prompt"},
      {"negative max_tokens", "POST", C, completion({{"max_tokens", -1}}), 400, "", "max_tokens"},
      {"max_tokens a string", "POST", C, completion({{"max_tokens", "8"}}), 400, "invalid_type", "max_tokens"},
      {"prompt + max_tokens beyond the context", "POST", C, completion({{"max_tokens", 510}}), 400,
       "context_length_exceeded", "max_tokens"},
      {"prompt beyond the context", "POST", C, completion({{"prompt", std::string(600, 'a')}}), 400,
       "context_length_exceeded", "prompt"},
      {"n = 17", "POST", C, completion({{"n", 17}}), 400, "", "n"},
      {"n = 0", "POST", C, completion({{"n", 0}}), 400, "", "n"},
      {"temperature a string", "POST", C, completion({{"temperature", "hot"}}), 400, "invalid_type", "temperature"},
      {"temperature out of range", "POST", C, completion({{"temperature", 3}}), 400, "", "temperature"},
      {"top_p 1.5", "POST", C, completion({{"top_p", 1.5}}), 400, "", "top_p"},
      {"top_k -2", "POST", C, completion({{"top_k", -2}}), 400, "", "top_k"},
      {"min_p 2", "POST", C, completion({{"min_p", 2}}), 400, "", "min_p"},
      {"repetition_penalty 0", "POST", C, completion({{"repetition_penalty", 0}}), 400, "", "repetition_penalty"},
      {"logprobs 6", "POST", C, completion({{"logprobs", 6}}), 400, "", "logprobs"},
      // logprobs with echo is served now (the prompt's logprobs, issue 37); out of range is not.
      {"logprobs with echo out of range", "POST", C, completion({{"logprobs", 9}, {"echo", true}}), 400, "", "logprobs"},
      {"best_of 2", "POST", C, completion({{"best_of", 2}}), 400, "unsupported_value", "best_of"},
      {"frequency_penalty 3", "POST", C, completion({{"frequency_penalty", 3}}), 400, "", "frequency_penalty"},
      {"presence_penalty a string", "POST", C, completion({{"presence_penalty", "x"}}), 400, "invalid_type",
       "presence_penalty"},
      {"logit_bias key not an id", "POST", C, completion({{"logit_bias", {{"abc", 1}}}}), 400, "invalid_type",
       "logit_bias"},
      {"logit_bias id outside the vocabulary", "POST", C, completion({{"logit_bias", {{"99999", 1}}}}), 400, "",
       "logit_bias"},
      {"logit_bias value 200", "POST", C, completion({{"logit_bias", {{"5", 200}}}}), 400, "", "logit_bias"},
      {"seed a float", "POST", C, completion({{"seed", 1.5}}), 400, "invalid_type", "seed"},
      {"echo not a boolean", "POST", C, completion({{"echo", "yes"}}), 400, "invalid_type", "echo"},
      {"unknown field", "POST", C, completion({{"frobnicate", true}}), 400, "unknown_parameter", "frobnicate"},
      {"stream_options without stream", "POST", C, completion({{"stream_options", {{"include_usage", true}}}}), 400,
       "", "stream_options"},
      {"five stop strings", "POST", C, completion({{"stop", {"a", "b", "c", "d", "e"}}}), 400, "", "stop"},
      {"empty stop string", "POST", C, completion({{"stop", ""}}), 400, "", "stop"},
      {"stop of the wrong type", "POST", C, completion({{"stop", 5}}), 400, "invalid_type", "stop"},
      {"chat without messages", "POST", CH, json{{"model", "target"}}.dump(), 400, "missing_required_parameter",
       "messages"},
      {"chat with empty messages", "POST", CH, chat({{"messages", json::array()}}), 400, "", "messages"},
      {"chat with an unknown role", "POST", CH, chat({{"messages", json::array({{{"role", "wizard"}, {"content", "x"}}})}}),
       400, "unsupported_value", "messages[0].role"},
      {"chat with an image part", "POST", CH,
       chat({{"messages", json::array({{{"role", "user"}, {"content", json::array({{{"type", "image_url"}}})}}})}}), 400,
       "unsupported_value", "messages[0].content"},
      {"chat logprobs not a boolean", "POST", CH, chat({{"logprobs", 3}}), 400, "invalid_type", "logprobs"},
      {"chat top_logprobs without logprobs", "POST", CH, chat({{"top_logprobs", 2}}), 400, "", "top_logprobs"},
      {"chat top_logprobs 21", "POST", CH, chat({{"logprobs", true}, {"top_logprobs", 21}}), 400, "", "top_logprobs"},
      {"chat temperature 2.5", "POST", CH, chat({{"temperature", 2.5}}), 400, "", "temperature"},
      {"max_tokens beyond double", "POST", C, R"({"model":"target","prompt":"x","max_tokens":1e999})", 400,
       "invalid_json", "max_tokens"},
      {"a 400-digit integer deep inside", "POST", CH,
       R"({"model":"target","messages":[{"role":"user","content":"x"}],"stop":["a",1)" + std::string(400, '0') + "]}",
       400, "invalid_json", "stop[1]"},
      {"nested 100 deep", "POST", C, std::string(100, '[') + std::string(100, ']'), 400, "invalid_json", ""},
      {"content part type not a string", "POST", CH,
       R"({"model":"target","messages":[{"role":"user","content":[{"type":1,"text":"x"}]}]})", 400, "",
       "messages[0].content"},
      {"GET on completions", "GET", C, "", 405, "method_not_allowed", ""},
      {"POST on models", "POST", "/v1/models", "{}", 405, "method_not_allowed", ""},
      {"unknown path", "GET", "/v1/nothing", "", 404, "not_found", ""},
      {"body too large", "POST", C, completion({{"prompt", std::string(1100000, 'a')}}), 413, "request_too_large", ""},
  };
  for (const auto& b : table) {
    INFO(b.what << ": " << b.method << " " << b.path);
    HttpResult r = request(port, b.method, b.path, b.body, {{"Content-Type", "application/json"}});
    INFO("got " << r.status << " " << r.body);
    CHECK(r.status == b.status);
    json j = r.json_body();
    REQUIRE(j.contains("error"));
    const json& e = j["error"];
    CHECK(e["message"].is_string());
    CHECK_FALSE(e["message"].get<std::string>().empty());
    CHECK(e["type"].is_string());
    CHECK(e.contains("param"));
    CHECK(e.contains("code"));
    if (*b.code) CHECK(e["code"] == b.code);
    if (*b.param) CHECK(e["param"] == b.param);
  }
  // Still serving, on a keep-alive connection too.
  HttpResult ok = post(port, "/v1/completions", json::parse(completion({})));
  CHECK(ok.status == 200);
  CHECK(request(port, "GET", "/health").status == 200);
}

// Issue 71: a longrope model (Phi-3.5's kind) is served on its short factors, its context capped
// at the original (128 in the tiny preset): a longer request gets 400 saying that --longrope long
// serves more; a server started with it takes the request.
TEST_CASE("a longrope model: a request past its short factors' context gets 400 naming --longrope long") {
  const std::string m = make_pair("--arch phi3 --longrope --preset tiny --seed 3", "phi3-longrope");
  json prompt = json::array();
  for (int i = 0; i < 130; ++i) prompt.push_back(i % 250);
  const json body{{"prompt", prompt}, {"max_tokens", 4}};
  {
    ServerProcess s({"--model", m, "--draft", m + "-draft"});
    HttpResult r = post(s.port(), "/v1/completions", body);
    INFO(r.body);
    CHECK(r.status == 400);
    const json e = r.json_body()["error"];
    CHECK(e["code"] == "context_length_exceeded");
    CHECK(e["message"].get<std::string>().find("--longrope long serves up to 512 tokens") != std::string::npos);
  }
  ServerProcess l({"--model", m, "--draft", m + "-draft", "--longrope", "long"});
  HttpResult r = post(l.port(), "/v1/completions", body);
  INFO(r.body);
  CHECK(r.status == 200);
}
