// Structured output end to end (issue 46): the official openai npm client asks a real server for
// response_format json_schema (chat plain and streamed, sampled n = 2, completions) and for
// tool_choice required / a named function; every answer that ended is valid against its schema by
// Debian's python3-jsonschema, streamed equals plain, and one cut by max_tokens ends by "length".
// The tiny random models would write anything without the grammar's masks. Needs
// tests/http/fetch.sh (the npm client).
#include <filesystem>

#include <catch2/catch.hpp>

#include "tests/grammar/support.h"
#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

json run_client(int port, const std::string& model, const std::string& what) {
  if (!std::filesystem::exists(std::string(HTTP_TEST_DIR) + "/node_modules/openai/package.json"))
    FAIL("the openai npm package is missing: run tests/http/fetch.sh (scripts/test does)");
  int status = 0;
  const std::string out = run_capture("cd " HTTP_TEST_DIR " && timeout 240 node openai_structured.mjs http://127.0.0.1:" +
                                          std::to_string(port) + "/v1 " + model + " " + what + " 2>&1",
                                      &status);
  INFO(out);
  REQUIRE(status == 0);
  return json::parse(out);
}

// python3-jsonschema's verdict over (schema, text) cases: all valid.
void check_valid(const std::vector<std::pair<json, std::string>>& texts) {
  std::vector<nlohmann::ordered_json> cases;
  for (size_t i = 0; i < texts.size(); ++i)
    cases.push_back({{"name", "answer " + std::to_string(i)},
                     {"schema", nlohmann::ordered_json::parse(texts[i].first.dump())},
                     {"text", texts[i].second}});
  const auto verdict = exspec::grammar::test::validate_with_python(cases);
  INFO(verdict.report);
  CHECK(verdict.checked == cases.size());
  CHECK(verdict.invalid == 0);
}

}  // namespace

TEST_CASE("structured output end to end: the openai client's json_schema answers validate") {
  const int port = shared_server().port();
  const double masks_before = metric(port, "exspec_grammar_masks_total");
  const json j = run_client(port, "target", "json");
  INFO(j.dump());
  std::vector<std::pair<json, std::string>> texts;
  for (const json& a : {j["chat"], j["chat_stream"], j["sampled"][0], j["sampled"][1], j["completion"]}) {
    CHECK(a["finish"] == "stop");
    texts.push_back({j["schema"], a["content"].get<std::string>()});
  }
  check_valid(texts);
  CHECK(j["chat_stream"]["content"] == j["chat"]["content"]);
  // Cut by max_tokens mid-object: OpenAI's "length", and the start the schema forces.
  CHECK(j["short"]["finish"] == "length");
  const std::string cut = j["short"]["content"].get<std::string>();
  CHECK(!cut.empty());
  CHECK(std::string("{\"customer_full_name\":\"").rfind(cut, 0) == 0);
  CHECK(metric(port, "exspec_grammar_masks_total") > masks_before);
  CHECK(metric(port, "exspec_grammar_mask_seconds_total") > 0);
}

TEST_CASE("structured output end to end: tool_choice required and named give calls that validate") {
  const std::string model = make_pair("--arch qwen3 --preset small --seed 3", "qwen3-structured");
  ServerProcess s({"--model", model, "--draft", model + "-draft", "--chat-template", qwen3_template_file()});
  const json j = run_client(s.port(), "qwen3-structured", "tools");
  INFO(j.dump());
  std::vector<std::pair<json, std::string>> texts;
  for (const char* key : {"required", "required_stream", "named", "named_stream"}) {
    INFO(key);
    CHECK(j[key]["finish"] == "tool_calls");
    REQUIRE(j[key]["calls"].size() == 1);
    for (const json& c : j[key]["calls"]) texts.push_back({j["parameters"], c["arguments"].get<std::string>()});
  }
  for (const char* key : {"named", "named_stream"}) CHECK(j[key]["calls"][0]["name"] == "get_time");
  CHECK(j["required_stream"]["calls"] == j["required"]["calls"]);
  CHECK(j["named_stream"]["calls"] == j["named"]["calls"]);
  check_valid(texts);
}
