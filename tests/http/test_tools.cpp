// Chat templates and tools behind a real server: the prompt is what python3-jinja2 renders for
// apply_chat_template (Qwen3's real template over the tiny byte-level model), the answer the
// float64 oracle's; /tokenize takes messages; a raising template is a 400 with its message, one
// that cannot run refuses start-up; special-token text in prompts becomes those tokens unless asked;
// tool_choice "required" and a named function accepted (the official SDK), tools' parameters in the
// client's key order.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "model/tokenizer/tokenizer.h"
#include "tests/http/support.h"
#include "tests/jinja/support.h"

using namespace exspec::httptest;

namespace {

// python3-jinja2's rendering of tool_history() through `tpl` (as apply_chat_template; content
// null sent back as "", which is what the server retries with for Qwen3's template).
std::string reference_prompt(const std::string& tpl, bool add_generation_prompt) {
  exspec::jinjatest::Case c;
  c.tpl = tpl;
  c.vars = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
  nlohmann::ordered_json msgs = tool_history()["messages"];
  msgs[2]["content"] = "";
  msgs[2]["tool_calls"][0]["function"]["arguments"] = nlohmann::ordered_json{{"city", "Paris"}};
  c.vars["messages"] = msgs;
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();
  for (const auto& t : tool_history()["tools"])  // the server's order: type, then function's name, description, parameters
    tools.push_back(nlohmann::ordered_json{{"type", "function"},
                                           {"function", {{"name", t["function"]["name"]},
                                                         {"description", t["function"]["description"]},
                                                         {"parameters", t["function"]["parameters"]}}}});
  c.vars["tools"] = tools;
  c.vars["documents"] = nullptr;
  c.vars["add_generation_prompt"] = add_generation_prompt;
  const auto r = exspec::jinjatest::reference({c});
  REQUIRE(r[0].ok);
  return r[0].text;
}

}  // namespace

TEST_CASE("tools over HTTP: Qwen3's template renders as python3-jinja2 does, the answer is the oracle's") {
  const std::string tpl_file = qwen3_template_file();
  std::ifstream f(tpl_file);
  const std::string tpl((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // Tools make long prompts (853 tokens here): a Qwen3 model with 2,048 positions, and its draft.
  const std::string model = make_pair("--arch qwen3 --preset small --seed 3", "qwen3-small");
  int status = 0;
  ServerProcess s({"--model", model, "--draft", model + "-draft", "--chat-template", tpl_file});
  const std::vector<int64_t> want_prompt = bytes_of(reference_prompt(tpl, true));

  json body = tool_history();
  body["max_tokens"] = 10;
  body["return_token_ids"] = true;
  HttpResult r = post(s.port(), "/v1/chat/completions", body);
  INFO(r.body);
  REQUIRE(r.status == 200);
  const json answer = r.json_body();
  const json& c = answer["choices"][0];
  CHECK(c["prompt_token_ids"].get<std::vector<int64_t>>() == want_prompt);
  // The float64 oracle of the same model: plain decoding, batch 1 (the server speculates, B 4).
  const std::vector<int64_t> want_ids = sampled_oracle(want_prompt, 10, "--model " + model)[0].ids;
  const OracleOut want{want_ids, want_ids.size() == 10 ? "length" : "stop"};
  CHECK(c["token_ids"].get<std::vector<int64_t>>() == want.ids);
  // A random model writes no <tool_call>: all content, the oracle's text (its end token hidden).
  const exspec::Tokenizer tok = exspec::Tokenizer::load(model);
  std::vector<int64_t> shown;
  for (int64_t id : want.ids)
    if (id != 257) shown.push_back(id);
  CHECK(c["message"]["content"] == tok.decode(shown));
  CHECK_FALSE(c["message"].contains("tool_calls"));
  CHECK(c["finish_reason"] == want.finish);

  // Streamed: the same content in deltas, the same finish.
  body["stream"] = true;
  HttpResult st = post(s.port(), "/v1/chat/completions", body);
  REQUIRE(st.status == 200);
  bool done = false;
  std::string content, finish;
  for (const auto& e : sse_events(st.body, &done)) {
    const json& ch = e["choices"][0];
    if (ch["delta"].contains("content")) content += ch["delta"]["content"].get<std::string>();
    CHECK_FALSE(ch["delta"].contains("tool_calls"));
    if (!ch["finish_reason"].is_null()) finish = ch["finish_reason"];
  }
  CHECK(done);
  CHECK(content == c["message"]["content"]);
  CHECK(finish == want.finish);

  // /tokenize with messages and tools: the same ids; without the generation prompt, its text less.
  json tk = tool_history();
  HttpResult t1 = post(s.port(), "/tokenize", tk);
  REQUIRE(t1.status == 200);
  CHECK(t1.json_body()["tokens"].get<std::vector<int64_t>>() == want_prompt);
  tk["add_generation_prompt"] = false;
  HttpResult t2 = post(s.port(), "/tokenize", tk);
  REQUIRE(t2.status == 200);
  CHECK(t2.json_body()["tokens"].get<std::vector<int64_t>>() == bytes_of(reference_prompt(tpl, false)));

  // The official openai client: the same history plain and through its stream accumulator.
  if (!std::filesystem::exists(std::string(HTTP_TEST_DIR) + "/node_modules/openai/package.json"))
    FAIL("the openai npm package is missing: run tests/http/fetch.sh (scripts/test does)");
  const std::string out = run_capture("cd " HTTP_TEST_DIR " && timeout 120 node openai_tools.mjs http://127.0.0.1:" +
                                      std::to_string(s.port()) + "/v1 qwen3-small 2>&1", &status);
  INFO(out);
  REQUIRE(status == 0);
  const json sdk = json::parse(out);
  for (const char* how : {"plain", "stream"}) {
    CHECK(sdk[how]["content"] == c["message"]["content"]);
    CHECK(sdk[how]["finish"] == want.finish);
    CHECK(sdk[how]["tool_calls"] == json::array());
  }
  for (const char* accepted : {"required", "required_single", "named", "json_schema", "auto_json"}) {
    INFO(accepted);
    CHECK(sdk[accepted]["status"] == 200);
    CHECK(sdk[accepted]["stream"].is_string());  // the stream accumulator got a finish reason
  }
  CHECK(sdk["unknown"]["status"] == 400);
  CHECK(sdk["unknown"]["param"] == "tool_choice.function.name");
  CHECK(sdk["bad_schema"]["status"] == 400);
  CHECK(sdk["bad_schema"]["param"] == "response_format.json_schema.schema");

  // tool_choice "required" with a response format is two constraints; bad choices and tools are
  // 400s naming the field.
  auto error_of = [&](json b) {
    b["messages"] = json::array({{{"role", "user"}, {"content", "hi"}}});
    HttpResult e = post(s.port(), "/v1/chat/completions", b);
    CHECK(e.status == 400);
    return e.json_body()["error"];
  };
  json req = {{"tools", tool_history()["tools"]}, {"tool_choice", "required"}, {"response_format", {{"type", "json_object"}}}};
  CHECK(error_of(req)["param"] == "tool_choice");
  req = {{"tools", tool_history()["tools"]}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}};
  CHECK(error_of(req)["param"] == "tool_choice.function.name");
  req = {{"tools", json::array({{{"type", "function"}, {"function", {{"name", "a b"}}}}})}};
  CHECK(error_of(req)["param"] == "tools[0].function.name");
  req = {{"tools", json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
           "properties": {"a": {"type": "string", "format": "uri"}}}}}])")}, {"tool_choice", "required"}};
  CHECK(error_of(req)["param"] == "tools[0].function.parameters");

  // A tool's parameters reach the template in the client's key order (Python's json.loads keeps
  // it): sent as text with keys out of sorted order, rendered as python3-jinja2 renders them.
  const std::string unsorted = R"({"messages": [{"role": "user", "content": "Weather?"}], "tools": [{"type": "function",
      "function": {"name": "get_weather", "parameters": {"type": "object", "required": ["unit", "city"],
      "properties": {"unit": {"enum": ["c", "f"], "description": "the unit"}, "city": {"type": "string"}}}}}]})";
  HttpResult ordered = request(s.port(), "POST", "/tokenize", unsorted, {{"Content-Type", "application/json"}});
  REQUIRE(ordered.status == 200);
  exspec::jinjatest::Case ref;
  ref.tpl = tpl;
  ref.vars = nlohmann::ordered_json::parse(unsorted);
  ref.vars["documents"] = nullptr;
  ref.vars["add_generation_prompt"] = true;
  const exspec::Tokenizer model_tok = exspec::Tokenizer::load(model);
  for (const auto& [k, v] : model_tok.special_tokens_map()) ref.vars[k] = v;
  const auto rendered = exspec::jinjatest::reference({ref});
  REQUIRE(rendered[0].ok);
  CHECK(rendered[0].text.find(R"("required": ["unit", "city"], "properties": {"unit")") != std::string::npos);
  CHECK(ordered.json_body()["tokens"].get<std::vector<int64_t>>() == bytes_of(rendered[0].text));
}

TEST_CASE("tools over HTTP: a template without tool syntax, one that raises, one that cannot run") {
  // The generated model has no template: ChatML, which writes no tool calls.
  HttpResult r = post(shared_server().port(), "/v1/chat/completions",
                      {{"messages", json::array({{{"role", "user"}, {"content", "hi"}}})},
                       {"tools", tool_history()["tools"]}, {"max_tokens", 2}});
  CHECK(r.status == 400);
  CHECK(r.json_body()["error"]["param"] == "tools");
  r = post(shared_server().port(), "/v1/chat/completions",
           {{"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}, {"tools", tool_history()["tools"]},
            {"tool_choice", "none"}, {"max_tokens", 2}});
  CHECK(r.status == 200);

  const std::string strict = scratch() + "/strict.jinja";
  std::ofstream(strict) << "{% for m in messages %}{% if m.role == 'system' and not loop.first %}"
                           "{{ raise_exception('System messages must come first.') }}{% endif %}"
                           "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n";
  ServerProcess s({"--chat-template", strict});
  r = post(s.port(), "/v1/chat/completions",
           {{"messages", json::array({{{"role", "user"}, {"content", "hi"}}, {{"role", "system"}, {"content", "late"}}})},
            {"max_tokens", 2}});
  CHECK(r.status == 400);
  CHECK(r.json_body()["error"]["message"] == "System messages must come first.");
  CHECK(r.json_body()["error"]["code"] == "chat_template_error");
  CHECK(r.json_body()["error"]["type"] == "invalid_request_error");
  const json card = json::parse(request(s.port(), "GET", "/v1/models/" + std::filesystem::path(models().target).filename().string()).body);
  CHECK(card["settings"]["chat_template"] == "strict.jinja");  // its name, not the server's path

  const std::string bad = scratch() + "/bad.jinja";
  std::ofstream(bad) << "{% for m in messages %}\n{{ m.content | shout }}\n{% endfor %}";
  ServerProcess refused({"--chat-template", bad}, /*wait_ready=*/false);
  CHECK(refused.wait_exit(60) != 0);
  CHECK_THAT(refused.log(), Catch::Contains("line 2") && Catch::Contains("unknown filter 'shout'"));
}

TEST_CASE("special tokens written in a prompt become those tokens, unless split_special_tokens") {
  const std::string glm = make_pair("--arch glm4 --preset tiny --seed 2", "glm4-special");
  const exspec::Tokenizer tok = exspec::Tokenizer::load(glm);
  const std::string text = "<|user|>\nhi<|assistant|>";
  const auto as_tokens = tok.encode(text, true, /*allow_special=*/true), as_text = tok.encode(text, true, false);
  REQUIRE(as_tokens.size() < as_text.size());
  ServerProcess s({"--model", glm, "--draft", glm + "-draft"});
  auto tokens = [&](int port, json body) {
    HttpResult r = post(port, "/tokenize", body);
    REQUIRE(r.status == 200);
    return r.json_body()["tokens"].get<std::vector<int64_t>>();
  };
  CHECK(tokens(s.port(), {{"prompt", text}}) == as_tokens);
  CHECK(tokens(s.port(), {{"prompt", text}, {"split_special_tokens", true}}) == as_text);
  HttpResult c = post(s.port(), "/v1/completions", {{"prompt", text}, {"max_tokens", 1}, {"return_token_ids", true}});
  REQUIRE(c.status == 200);
  CHECK(c.json_body()["choices"][0]["prompt_token_ids"].get<std::vector<int64_t>>() == as_tokens);
  c = post(s.port(), "/v1/completions",
           {{"prompt", text}, {"max_tokens", 1}, {"return_token_ids", true}, {"split_special_tokens", true}});
  REQUIRE(c.status == 200);
  CHECK(c.json_body()["choices"][0]["prompt_token_ids"].get<std::vector<int64_t>>() == as_text);
  ServerProcess split({"--model", glm, "--draft", glm + "-draft", "--split-special-tokens"});
  CHECK(tokens(split.port(), {{"prompt", text}}) == as_text);
  CHECK(tokens(split.port(), {{"prompt", text}, {"split_special_tokens", false}}) == as_tokens);
}
