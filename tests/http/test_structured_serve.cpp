// Structured output behind a real server (the shared tiny model: byte-level tokenizer, ChatML):
// every request form is accepted on both endpoints, streamed or not, n > 1, and in batch lines;
// bad schemas, unsupported keywords, two constraints, wrong types and sizes over the limit are
// 400s naming the field. What the text is, is test_structured_e2e.cpp's (validated answers) and
// the engine's oracle sweeps' (tests/test_structured_oracle.cpp).
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

const json& point_schema() {
  static const json s = json::parse(R"({"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                                        "required": ["x", "y"], "additionalProperties": false})");
  return s;
}

json json_schema_format(const json& schema) {
  return {{"type", "json_schema"}, {"json_schema", {{"name", "point"}, {"strict", true}, {"schema", schema}}}};
}

json chat(json extra) {
  json b{{"messages", json::array({{{"role", "user"}, {"content", "A point, please."}}})}, {"max_tokens", 6}};
  b.update(extra);
  return b;
}

json completion(json extra) {
  json b{{"prompt", "A point: "}, {"max_tokens", 6}};
  b.update(extra);
  return b;
}

// The error object of a 400 (fails on any other status).
json error_of(int port, const std::string& target, const json& body) {
  HttpResult r = post(port, target, body);
  INFO(r.body);
  REQUIRE(r.status == 400);
  CHECK(r.json_body()["error"]["type"] == "invalid_request_error");
  return r.json_body()["error"];
}

}  // namespace

TEST_CASE("structured output over HTTP: every form is accepted on both endpoints, streamed, n > 1") {
  const int port = shared_server().port();
  const std::vector<json> forms{
      {{"response_format", {{"type", "json_object"}}}},
      {{"response_format", json_schema_format(point_schema())}},
      {{"structured_outputs", {{"json", point_schema()}}}},
      {{"structured_outputs", {{"regex", "[0-9]{1,3}"}}}},
      {{"structured_outputs", {{"choice", {"left", "right"}}}}},
      {{"structured_outputs", {{"grammar", "root ::= (\"a\" | \"b\")+"}}}},
      {{"structured_outputs", {{"json_object", true}}}},
      {{"guided_json", point_schema()}},
      {{"guided_regex", "[0-9]+"}},
      {{"guided_choice", {"yes", "no"}}},
      {{"guided_grammar", "root ::= [a-z]+"}},
      {{"response_format", {{"type", "text"}}}}};
  for (const json& f : forms) {
    INFO(f.dump());
    for (const char* target : {"/v1/chat/completions", "/v1/completions"}) {
      json body = std::string(target) == "/v1/completions" ? completion(f) : chat(f);
      body["n"] = 2;
      body["temperature"] = 0.7;
      body["seed"] = 5;
      HttpResult r = post(port, target, body);
      INFO(target << " " << r.body);
      REQUIRE(r.status == 200);
      CHECK(r.json_body()["choices"].size() == 2);
      body["stream"] = true;
      r = post(port, target, body);
      REQUIRE(r.status == 200);
      bool done = false;
      sse_events(r.body, &done);
      CHECK(done);
    }
  }
  // Each of the 8 distinct grammars compiled once (json_object and the point schema come in three
  // forms each); the other 36 of the 44 requests found them.
  CHECK(metric(port, "exspec_grammar_compiles_total") == 8);
  CHECK(metric(port, "exspec_grammar_cache_hits_total") == 36);
  CHECK(metric(port, "exspec_grammar_cache_entries") == 8);
  CHECK(metric(port, "exspec_grammar_cache_bytes") > 0);
}

TEST_CASE("structured output over HTTP: refusals are 400s naming the field, the keyword and its path") {
  const int port = shared_server().port();
  json bad = point_schema();
  bad["properties"]["x"] = {{"type", "integer"}, {"not", {{"const", 3}}}};
  json e = error_of(port, "/v1/chat/completions", chat({{"response_format", json_schema_format(bad)}}));
  CHECK(e["param"] == "response_format.json_schema.schema");
  CHECK(e["code"] == "invalid_grammar");
  CHECK_THAT(e["message"].get<std::string>(), Catch::Contains("'not'") && Catch::Contains("#/properties/x/not"));
  e = error_of(port, "/v1/completions", completion({{"guided_json", {{"type", "object"}, {"patternProperties", json::object()}}}}));
  CHECK(e["param"] == "guided_json");
  CHECK_THAT(e["message"].get<std::string>(), Catch::Contains("patternProperties") && Catch::Contains("#/patternProperties"));
  e = error_of(port, "/v1/completions", completion({{"structured_outputs", {{"regex", "a(?!b)"}}}}));
  CHECK(e["param"] == "structured_outputs.regex");
  e = error_of(port, "/v1/chat/completions", chat({{"structured_outputs", {{"grammar", "root ::= missing"}}}}));
  CHECK(e["param"] == "structured_outputs.grammar");
  // Two constraints, wrong types, unknown and unsupported fields.
  CHECK(error_of(port, "/v1/chat/completions", chat({{"response_format", {{"type", "json_object"}}}, {"guided_regex", "a"}}))["param"] ==
        "guided_regex");
  CHECK(error_of(port, "/v1/completions", completion({{"structured_outputs", {{"regex", "a"}, {"choice", {"a"}}}}}))["param"] ==
        "structured_outputs.choice");
  CHECK(error_of(port, "/v1/completions", completion({{"guided_choice", "a"}}))["param"] == "guided_choice");
  CHECK(error_of(port, "/v1/chat/completions", chat({{"response_format", {{"type", "json_schema"}}}}))["param"] ==
        "response_format.json_schema");
  CHECK(error_of(port, "/v1/chat/completions", chat({{"response_format", {{"type", "regex"}}}}))["param"] ==
        "response_format.type");
  CHECK(error_of(port, "/v1/completions", completion({{"structured_outputs", {{"regex", "a"}, {"whitespace_pattern", " "}}}}))["param"] ==
        "structured_outputs.whitespace_pattern");
  // What a grammar leaves no room for.
  CHECK(error_of(port, "/v1/completions", completion({{"guided_regex", "a"}, {"ignore_eos", true}}))["param"] == "ignore_eos");
  CHECK(error_of(port, "/v1/completions", completion({{"guided_regex", "a"}, {"min_tokens", 2}}))["param"] == "min_tokens");
  // Sizes: limits.max_grammar_bytes (64 KiB) bounds a schema.
  json big = {{"type", "object"}, {"properties", json::object()}};
  for (int i = 0; i < 3000; ++i) big["properties"]["property_" + std::to_string(i)] = {{"type", "string"}};
  e = error_of(port, "/v1/chat/completions", chat({{"response_format", json_schema_format(big)}}));
  CHECK(e["param"] == "response_format.json_schema.schema");
  CHECK_THAT(e["message"].get<std::string>(), Catch::Contains("limits.max_grammar_bytes"));
  // ChatML writes no tool calls: "required" cannot be constrained to them.
  const json tools = json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}])");
  CHECK(error_of(port, "/v1/chat/completions", chat({{"tools", tools}, {"tool_choice", "required"}}))["param"] == "tool_choice");
  // The server is still well.
  CHECK(post(port, "/v1/completions", completion({{"guided_regex", "[0-9]+"}})).status == 200);
}

TEST_CASE("structured output over HTTP: batch lines go through the same parsers") {
  const std::string in = scratch() + "/structured-in.jsonl", out = scratch() + "/structured-out.jsonl";
  json bad = point_schema();
  bad["minProperties"] = 1;
  std::ofstream(in) << json{{"custom_id", "ok"}, {"method", "POST"}, {"url", "/v1/chat/completions"},
                            {"body", chat({{"response_format", json_schema_format(point_schema())}})}}.dump() << "\n"
                    << json{{"custom_id", "bad"}, {"method", "POST"}, {"url", "/v1/chat/completions"},
                            {"body", chat({{"response_format", json_schema_format(bad)}})}}.dump() << "\n"
                    << json{{"custom_id", "two"}, {"method", "POST"}, {"url", "/v1/completions"},
                            {"body", completion({{"guided_regex", "a"}, {"guided_choice", {"a"}}})}}.dump() << "\n";
  int st = 0;
  const std::string log = run_capture(std::string(EXSPEC_BIN) + " batch --input " + in + " --output " + out + " --model " +
                                      models().target + " --draft " + models().draft + " --dtype float64 --threads 1 2>&1", &st);
  INFO(log);
  REQUIRE(st == 0);
  std::map<std::string, json> by_id;
  std::ifstream f(out);
  for (std::string line; std::getline(f, line);) {
    const json o = json::parse(line);
    by_id[o["custom_id"]] = o;
  }
  REQUIRE(by_id.size() == 3);
  INFO(json(by_id).dump());
  CHECK(by_id["ok"]["response"]["status_code"] == 200);
  CHECK(by_id["bad"]["response"]["status_code"] == 400);
  CHECK(by_id["bad"]["response"]["body"]["error"]["param"] == "response_format.json_schema.schema");
  CHECK_THAT(by_id["bad"]["response"]["body"]["error"]["message"].get<std::string>(), Catch::Contains("minProperties"));
  CHECK(by_id["two"]["response"]["status_code"] == 400);
  CHECK(by_id["two"]["response"]["body"]["error"]["param"] == "guided_choice");
}
