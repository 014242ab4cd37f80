// The chat page's server side: GET / serves the embedded page (--no-web-page: 404), and the
// stream extension it reads, stream_options.include_origin (docs/serving.md): checked through
// the official openai npm client (the fields appear only when asked for) and a raw stream (one
// origin per counted token, their text the content, the origins' counts against the engine's).
#include <filesystem>
#include <set>

#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

// The origins of a raw stream's tokens, its content, its last chunk's speculation and its usage.
struct Streamed {
  json origins = json::array(), speculation, usage;
  std::string content;
};

Streamed stream_with_origins(int port, const json& extra) {
  json body{{"model", "target"}, {"messages", json::array({{{"role", "user"}, {"content", "Tell me"}}})},
            {"max_tokens", 40}, {"temperature", 0}, {"stream", true}, {"stream_options", {{"include_usage", true}, {"include_origin", true}}}};
  body.update(extra);
  HttpResult r = post(port, "/v1/chat/completions", body);
  REQUIRE(r.status == 200);
  bool done = false;
  Streamed s;
  for (const json& e : sse_events(r.body, &done)) {
    if (e.contains("usage") && !e["usage"].is_null()) s.usage = e["usage"];
    for (const json& ch : e["choices"]) {
      REQUIRE(ch.contains("origin"));  // asked for: on every chunk of the choice
      for (const json& t : ch["origin"]) s.origins.push_back(t);
      if (ch["delta"].contains("content")) s.content += ch["delta"]["content"].get<std::string>();
      if (ch.contains("speculation")) s.speculation = ch["speculation"];
    }
  }
  CHECK(done);
  return s;
}

}  // namespace

TEST_CASE("web page: GET / serves the chat page, --no-web-page turns it off") {
  const int port = shared_server().port();
  HttpResult r = request(port, "GET", "/");
  REQUIRE(r.status == 200);
  CHECK(r.headers["content-type"] == "text/html; charset=utf-8");
  CHECK(r.body.find("<title>exspec</title>") != std::string::npos);
  CHECK(r.body.find("include_origin") != std::string::npos);
  // It loads nothing from elsewhere, and the browser is told so.
  CHECK(r.body.find("http://") == std::string::npos);
  CHECK(r.body.find("https://") == std::string::npos);
  CHECK(r.headers["content-security-policy"].find("default-src 'self'") != std::string::npos);
  CHECK(request(port, "POST", "/", "{}").status == 405);
  ServerProcess off({"--no-web-page"});
  HttpResult o = request(off.port(), "GET", "/");
  CHECK(o.status == 404);
  CHECK(o.body.find("--no-web-page") != std::string::npos);
  CHECK(request(off.port(), "GET", "/health").status == 200);
}

TEST_CASE("web page: include_origin gives every counted token its origin and text") {
  const int port = shared_server().port();
  const Streamed s = stream_with_origins(port, json::object());
  const json& u = s.usage;
  REQUIRE(u.is_object());
  REQUIRE(s.origins.size() == u["completion_tokens"].get<size_t>());
  std::string text;
  std::map<std::string, int64_t> by;
  for (const json& t : s.origins) {
    text += t["text"].get<std::string>();
    by[t["origin"].get<std::string>()]++;
    CHECK(std::set<std::string>{"target", "draft", "ngram", "prediction", "grammar"}.count(t["origin"]));
  }
  // No stop strings: the tokens' texts are the content (a character cut off at the end, flushed
  // as U+FFFD, goes with the last token).
  CHECK(text == s.content);
  REQUIRE(s.speculation.is_object());
  CHECK(s.speculation["tokens"] == u["completion_tokens"]);
  CHECK(s.speculation["accepted"] == u["completion_tokens_details"]["accepted_prediction_tokens"]);
  CHECK(s.speculation["drafted"].get<int64_t>() ==
        u["completion_tokens_details"]["accepted_prediction_tokens"].get<int64_t>() +
            u["completion_tokens_details"]["rejected_prediction_tokens"].get<int64_t>());
  for (const auto& [name, n] : by) CHECK(s.speculation["by_origin"][name] == n);
  // Each step commits one target token after its accepted drafts; the last step's may be cut
  // off by the end of the sequence. K is fixed at 3 on this server.
  const int64_t steps = s.speculation["steps"];
  CHECK((steps == by["target"] || steps == by["target"] + 1));
  CHECK(s.speculation["k_max"] == 3);
  // The draft model (trained with the target) has drafts accepted in 40 tokens of greedy text.
  CHECK(by["draft"] > 0);
  CHECK(by["draft"] <= s.speculation["accepted"].get<int64_t>());
}

TEST_CASE("web page: a strict schema's forced tokens come from the grammar") {
  const json schema{{"type", "object"},
                    {"properties", {{"answer", {{"type", "string"}, {"maxLength", 8}}}}},
                    {"required", {"answer"}},
                    {"additionalProperties", false}};
  const Streamed s = stream_with_origins(
      shared_server().port(),
      {{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "a"}, {"strict", true}, {"schema", schema}}}}}});
  REQUIRE(s.origins.size() == s.usage["completion_tokens"].get<size_t>());
  int64_t grammar = 0;
  for (const json& t : s.origins) grammar += t["origin"] == "grammar";
  CHECK(grammar > 0);  // `{"answer": "` is forced, and proposed as the grammar's drafts
  CHECK(json::parse(s.content)["answer"].is_string());
}

TEST_CASE("web page: the openai npm client sees no extension field unless it asks for origins") {
  const std::string dir = HTTP_TEST_DIR;
  if (!std::filesystem::exists(dir + "/node_modules/openai/package.json"))
    FAIL("the openai npm package is missing: run tests/http/fetch.sh (scripts/test does)");
  int st = 0;
  const std::string out = run_capture("cd " + dir + " && timeout 120 node openai_origin.mjs http://127.0.0.1:" +
                                          std::to_string(shared_server().port()) + "/v1 target 2>&1",
                                      &st);
  INFO(out);
  REQUIRE(st == 0);
  const json j = json::parse(out.substr(out.rfind("\n{") == std::string::npos ? 0 : out.rfind("\n{") + 1));
  for (const char* off : {"plain", "origin_off"}) {
    INFO(off);
    // Exactly the fields of a chunk before the extension: OpenAI's and the seed (the usage chunk's
    // without it).
    CHECK(j[off]["chunk_keys"] ==
          json::array({"choices,created,id,model,object,seed,usage", "choices,created,id,model,object,usage"}));
    CHECK(j[off]["choice_keys"] == json::array({"delta,finish_reason,index,logprobs"}));
    CHECK(j[off]["origins"].empty());
    CHECK(j[off]["speculation"].is_null());
    CHECK(j[off]["content"] == j["plain"]["content"]);
  }
  // Asked for: the same answer, with one origin per token.
  CHECK(j["origin"]["content"] == j["plain"]["content"]);
  CHECK(j["origin"]["chunk_keys"] == j["plain"]["chunk_keys"]);
  CHECK(j["origin"]["origins"].size() == j["origin"]["usage"]["completion_tokens"].get<size_t>());
  CHECK(j["origin"]["speculation"]["tokens"] == j["origin"]["usage"]["completion_tokens"]);
  CHECK(j["schema"]["origins"].size() == j["schema"]["usage"]["completion_tokens"].get<size_t>());
}
