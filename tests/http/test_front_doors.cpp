// Anthropic's Messages API and OpenAI's Responses API (http/front_doors.h) through their official
// npm clients (@anthropic-ai/sdk, openai) against a real server: every field and event the
// clients read, the same tokens as the chat-completions answer to the same conversation (greedy
// and seeded), tools forced and in a round trip's history on Qwen3's template, errors in each
// API's own shape. Needs tests/http/fetch.sh to have run.
#include <algorithm>
#include <filesystem>

#include <catch2/catch.hpp>

#include "tests/http/batch_support.h"
#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

json run_node(const std::string& script, int port, const std::string& base, const std::string& model,
              const std::string& mode, const std::string& key = "") {
  const std::string dir = HTTP_TEST_DIR;
  for (const char* pkg : {"openai", "@anthropic-ai/sdk"})
    if (!std::filesystem::exists(dir + "/node_modules/" + pkg + "/package.json"))
      FAIL("the npm package " << pkg << " is missing: run tests/http/fetch.sh (scripts/test does)");
  int st = 0;
  const std::string out = run_capture("cd " + dir + " && timeout 180 node " + script + " http://127.0.0.1:" +
                                      std::to_string(port) + base + " " + model + " " + mode + " " + key + " 2>&1", &st);
  INFO(out);
  REQUIRE(st == 0);
  return json::parse(out);
}

HttpResult post_with(int port, const std::string& target, const json& body, const std::string& key) {
  std::map<std::string, std::string> h{{"Content-Type", "application/json"}};
  if (!key.empty()) h["Authorization"] = "Bearer " + key;
  return request(port, "POST", target, body.dump(), h);
}

// The chat completion of the same conversation: its choice and usage.
json chat(int port, json body, const std::string& key = "") {
  HttpResult r = post_with(port, "/v1/chat/completions", body, key);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json_body();
}

bool starts(const json& s, const std::string& prefix) { return s.is_string() && s.get<std::string>().rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("front doors: Anthropic Messages through @anthropic-ai/sdk answer as chat completions do") {
  const int port = shared_server().port();
  const json sdk = run_node("anthropic_messages.mjs", port, "", "target", "text");
  const json want = chat(port, {{"model", "target"}, {"max_tokens", 12}, {"temperature", 0},
                                {"messages", {{{"role", "system"}, {"content", "Be brief."}},
                                              {{"role", "user"}, {"content", "Hello from node"}}}}});
  const std::string text = want["choices"][0]["message"]["content"];
  const std::string reason = want["choices"][0]["finish_reason"] == "length" ? "max_tokens" : "end_turn";
  const json& p = sdk["plain"];
  CHECK(starts(p["id"], "msg_"));
  CHECK(p["type"] == "message");
  CHECK(p["role"] == "assistant");
  CHECK(p["model"] == "target");
  REQUIRE(p["content"].size() == 1);
  CHECK(p["content"][0]["type"] == "text");
  CHECK(p["content"][0]["text"] == text);
  CHECK(p["stop_reason"] == reason);
  CHECK(p["stop_sequence"].is_null());
  CHECK(p["usage"]["input_tokens"] == want["usage"]["prompt_tokens"]);
  CHECK(p["usage"]["output_tokens"] == want["usage"]["completion_tokens"]);
  // Streamed: the documented order of events, the same text, stop reason and usage.
  const json& s = sdk["stream"];
  const json types = s["types"];
  REQUIRE(types.size() >= 5);
  CHECK(types[0] == "message_start");
  CHECK(types[1] == "content_block_start");
  CHECK(types[types.size() - 3] == "content_block_stop");
  CHECK(types[types.size() - 2] == "message_delta");
  CHECK(types.back() == "message_stop");
  CHECK(s["text"] == text);
  CHECK(s["stop_reason"] == reason);
  CHECK(s["usage"]["output_tokens"] == want["usage"]["completion_tokens"]);
  CHECK(s["start"]["usage"]["input_tokens"] == want["usage"]["prompt_tokens"]);
  CHECK(sdk["helper"]["content"][0]["text"] == text);
  CHECK(sdk["helper"]["stop_reason"] == reason);
  CHECK(sdk["count"]["input_tokens"] == want["usage"]["prompt_tokens"]);
  // Bad requests: 4xx in Anthropic's shape.
  for (const char* bad : {"no_max_tokens", "bad_temperature", "server_tool", "image", "thinking"}) {
    INFO(bad);
    CHECK(sdk[bad]["status"] == 400);
    CHECK(sdk[bad]["body"]["type"] == "error");
    CHECK(sdk[bad]["body"]["error"]["type"] == "invalid_request_error");
  }
  CHECK(sdk["unknown_model"]["status"] == 404);
  CHECK(sdk["unknown_model"]["body"]["error"]["type"] == "not_found_error");

  // A stop sequence (an ASCII character of the answer): the text before it, stop_reason
  // "stop_sequence" and which one, plain and as raw SSE lines.
  size_t at = 1;
  while (at < text.size() && !std::isalpha(static_cast<unsigned char>(text[at]))) ++at;
  if (at < text.size()) {
    const std::string stop(1, text[at]);
    json body = {{"model", "target"}, {"max_tokens", 12}, {"temperature", 0}, {"system", "Be brief."},
                 {"messages", {{{"role", "user"}, {"content", "Hello from node"}}}}, {"stop_sequences", {stop}}};
    HttpResult r = post(port, "/v1/messages", body);
    REQUIRE(r.status == 200);
    const json m = r.json_body();
    CHECK(m["stop_reason"] == "stop_sequence");
    CHECK(m["stop_sequence"] == stop);
    CHECK(m["content"][0]["text"] == text.substr(0, text.find(stop)));
    body["stream"] = true;
    HttpResult st = post(port, "/v1/messages", body);
    REQUIRE(st.status == 200);
    CHECK(st.headers["content-type"] == "text/event-stream");
    CHECK(st.body.rfind("event: message_start\ndata: {", 0) == 0);
    CHECK(st.body.find("event: ping\ndata: {\"type\":\"ping\"}\n\n") != std::string::npos);
    CHECK(st.body.find("\"stop_reason\":\"stop_sequence\",\"stop_sequence\":" + json(stop).dump()) != std::string::npos);
    CHECK(st.body.find("[DONE]") == std::string::npos);
  }
  // Errors of the route itself (a body that is not JSON) are Anthropic's too.
  HttpResult e = request(port, "POST", "/v1/messages", "{", {{"Content-Type", "application/json"}});
  CHECK(e.status == 400);
  CHECK(e.json_body()["type"] == "error");
  CHECK(e.json_body()["error"]["type"] == "invalid_request_error");
}

TEST_CASE("front doors: OpenAI Responses through the openai client answer as chat completions do") {
  const int port = shared_server().port();
  const json sdk = run_node("openai_responses.mjs", port, "/v1", "target", "text");
  const json msgs = {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hello from node"}}};
  const json want = chat(port, {{"model", "target"}, {"max_tokens", 12}, {"temperature", 0}, {"messages", msgs}});
  const std::string text = want["choices"][0]["message"]["content"];
  const bool cut = want["choices"][0]["finish_reason"] == "length";
  const json& p = sdk["plain"];
  CHECK(starts(p["id"], "resp_"));
  CHECK(p["object"] == "response");
  CHECK(p["created_at"].is_number_integer());
  CHECK(p["model"] == "target");
  CHECK(p["status"] == (cut ? "incomplete" : "completed"));
  if (cut) CHECK(p["incomplete_details"]["reason"] == "max_output_tokens");
  CHECK(p["instructions"] == "Be brief.");
  REQUIRE(p["output"].size() == 1);
  CHECK(p["output"][0]["type"] == "message");
  CHECK(starts(p["output"][0]["id"], "msg_"));
  CHECK(p["output"][0]["role"] == "assistant");
  CHECK(p["output"][0]["content"][0]["type"] == "output_text");
  CHECK(p["output"][0]["content"][0]["text"] == text);
  CHECK(p["output"][0]["content"][0]["annotations"] == json::array());
  CHECK(p["sdk_output_text"] == text);
  CHECK(p["usage"]["input_tokens"] == want["usage"]["prompt_tokens"]);
  CHECK(p["usage"]["output_tokens"] == want["usage"]["completion_tokens"]);
  CHECK(p["usage"]["total_tokens"] == want["usage"]["total_tokens"]);
  // Streamed: the documented events in order, numbered from 0.
  const json& s = sdk["stream"];
  const std::vector<std::string> first{"response.created", "response.in_progress", "response.output_item.added",
                                       "response.content_part.added"};
  const std::vector<std::string> last{"response.output_text.done", "response.content_part.done",
                                      "response.output_item.done", cut ? "response.incomplete" : "response.completed"};
  REQUIRE(s["types"].size() >= first.size() + last.size());
  for (size_t i = 0; i < first.size(); ++i) CHECK(s["types"][i] == first[i]);
  for (size_t i = 0; i < last.size(); ++i) CHECK(s["types"][s["types"].size() - last.size() + i] == last[i]);
  for (size_t i = 0; i < s["sequence"].size(); ++i) CHECK(s["sequence"][i] == i);
  CHECK(s["text"] == text);
  CHECK(s["last"]["output"][0]["content"][0]["text"] == text);
  CHECK(s["last"]["usage"]["output_tokens"] == want["usage"]["completion_tokens"]);
  CHECK(sdk["helper"] == text);
  // Seeded sampling and a json_schema format: the chat answer to the same request.
  const json seeded = chat(port, {{"model", "target"}, {"max_tokens", 12}, {"temperature", 0.8}, {"seed", 7}, {"messages", msgs}});
  CHECK(sdk["seeded"] == seeded["choices"][0]["message"]["content"]);
  const json point = json::parse(R"({"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                                      "required": ["x", "y"], "additionalProperties": false})");
  const json js = chat(port, {{"model", "target"}, {"max_tokens", 40}, {"temperature", 0}, {"messages", msgs},
                              {"response_format", {{"type", "json_schema"},
                                                   {"json_schema", {{"name", "point"}, {"strict", true}, {"schema", point}}}}}});
  CHECK(sdk["json_schema"]["text"] == js["choices"][0]["message"]["content"]);
  CHECK(sdk["json_schema"]["status"] == (js["choices"][0]["finish_reason"] == "length" ? "incomplete" : "completed"));
  // Refused fields: 400 naming the field the client sent.
  const std::map<std::string, std::string> params{{"web_search", "tools[0].type"}, {"reasoning", "reasoning"},
                                                  {"input_number", "input"}, {"store", "store"},
                                                  {"previous", "previous_response_id"}, {"format", "text.format.type"},
                                                  {"too_long", "max_output_tokens"}};
  for (const auto& [key, param] : params) {
    INFO(key << ": " << sdk[key].dump());
    CHECK(sdk[key]["status"] == 400);
    CHECK(sdk[key]["param"] == param);
  }
}

TEST_CASE("front doors: tools and the API key over Qwen3's template, through both clients") {
  const std::string model = make_pair("--arch qwen3 --preset small --seed 3", "qwen3-small");
  const std::string key = "sesame";
  ServerProcess srv({"--model", model, "--draft", model + "-draft", "--chat-template", qwen3_template_file(),
                     "--api-key", key});
  const int port = srv.port();
  const json a = run_node("anthropic_messages.mjs", port, "", "qwen3-small", "tools", key);
  const json o = run_node("openai_responses.mjs", port, "/v1", "qwen3-small", "tools", key);
  const json schema = json::parse(R"({"type": "object", "properties": {"unit": {"enum": ["c", "f"]}}, "required": ["unit"],
                                       "additionalProperties": false})");
  const json forced = chat(port, {{"model", "qwen3-small"}, {"max_tokens", 120}, {"temperature", 0},
                                  {"messages", {{{"role", "system"}, {"content", "Use tools."}},
                                                {{"role", "user"}, {"content", "Weather in Paris?"}}}},
                                  {"tools", {{{"type", "function"}, {"function", {{"name", "get_weather"},
                                             {"description", "Weather in a city."}, {"parameters", schema}}}}}},
                                  {"tool_choice", {{"type", "function"}, {"function", {{"name", "get_weather"}}}}}}, key);
  const json& call = forced["choices"][0]["message"]["tool_calls"][0]["function"];
  REQUIRE(call["name"] == "get_weather");
  const json args = json::parse(call["arguments"].get<std::string>());
  // Anthropic: a tool_use block with the call's input, stop_reason tool_use; streamed as
  // input_json_delta, and MessageStream's accumulated input.
  for (const json* m : {&a["plain"], &a["helper"]}) {
    const json& block = (*m)["content"].back();
    CHECK(block["type"] == "tool_use");
    CHECK(starts(block["id"], "toolu_"));
    CHECK(block["name"] == "get_weather");
    CHECK(block["input"] == args);
    CHECK((*m)["stop_reason"] == "tool_use");
  }
  CHECK(json::parse(a["stream"]["json"].get<std::string>()) == args);
  CHECK(a["stream"]["stop_reason"] == "tool_use");
  // Responses: a function_call item with its call_id and the arguments as text.
  for (const json* r : {&o["plain"], &o["helper"]}) {
    const json& item = (*r)["output"].back();
    CHECK(item["type"] == "function_call");
    CHECK(starts(item["call_id"], "call_"));
    CHECK(starts(item["id"], "fc_"));
    CHECK(item["name"] == "get_weather");
    CHECK(item["status"] == "completed");
    CHECK(json::parse(item["arguments"].get<std::string>()) == args);
  }
  CHECK(json::parse(o["stream"]["args"].get<std::string>()) == args);
  const json& types = o["stream"]["types"];
  CHECK(std::find(types.begin(), types.end(), "response.function_call_arguments.done") != types.end());

  // A round trip's history (tool_use / tool_result blocks, function_call / _output items): the
  // prompt the chat template renders for the chat history, and the same answer.
  json history = tool_history();
  history["model"] = "qwen3-small", history["max_tokens"] = 10, history["temperature"] = 0;
  const json h = chat(port, history, key);
  const std::string content = h["choices"][0]["message"]["content"];
  CHECK(a["history_count"]["input_tokens"] == h["usage"]["prompt_tokens"]);
  CHECK(a["history"]["usage"]["input_tokens"] == h["usage"]["prompt_tokens"]);
  CHECK(a["history"]["content"][0]["text"] == content);
  CHECK(o["history"]["usage"]["input_tokens"] == h["usage"]["prompt_tokens"]);
  CHECK(o["history"]["output"][0]["content"][0]["text"] == content);

  // The key as x-api-key (the Anthropic client's way) worked above; a wrong one is a 401 in
  // Anthropic's shape, and so is a missing one.
  CHECK(a["wrong_key"]["status"] == 401);
  CHECK(a["wrong_key"]["body"]["error"]["type"] == "authentication_error");
  HttpResult none = post(port, "/v1/messages/count_tokens", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  CHECK(none.status == 401);
  CHECK(none.json_body()["error"]["type"] == "authentication_error");
  HttpResult xk = request(port, "POST", "/v1/chat/completions",
                          json{{"max_tokens", 2}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}}.dump(),
                          {{"Content-Type", "application/json"}, {"x-api-key", key}});
  CHECK(xk.status == 200);
}

TEST_CASE("front doors: stored responses survive a restart, previous_response_id continues them") {
  const std::string dir = data_dir("responses");
  json first, second;
  std::string unkept;
  const json turn1 = {{{"role", "user"}, {"content", "Hello from node"}}};
  {
    ServerProcess srv({"--data-dir", dir});
    const json o = run_node("openai_responses.mjs", srv.port(), "/v1", "target", "store");
    first = o["first"], second = o["second"], unkept = o["unkept"];
    CHECK(first["store"] == true);
    CHECK(o["unkept_store"] == false);
    CHECK(o["retrieved"]["id"] == first["id"]);
    CHECK(o["retrieved"]["output"] == first["output"]);
    CHECK(second["previous_response_id"] == first["id"]);
    // The second turn is the chat answer to the whole conversation: turn 1, its answer, turn 2.
    json msgs = turn1;
    msgs.push_back({{"role", "assistant"}, {"content", first["output"][0]["content"][0]["text"]}});
    msgs.push_back({{"role", "user"}, {"content", "And then?"}});
    const json want = chat(srv.port(), {{"max_tokens", 8}, {"temperature", 0}, {"messages", msgs}});
    CHECK(second["usage"]["input_tokens"] == want["usage"]["prompt_tokens"]);
    CHECK(second["output"][0]["content"][0]["text"] == want["choices"][0]["message"]["content"]);
  }
  // Restarted on the same data directory: both kept (the streamed one too), the unkept one not;
  // a third turn continues the second.
  ServerProcess srv({"--data-dir", dir});
  const int port = srv.port();
  HttpResult got = request(port, "GET", "/v1/responses/" + second["id"].get<std::string>());
  REQUIRE(got.status == 200);
  CHECK(got.json_body()["output"] == second["output"]);
  CHECK(request(port, "GET", "/v1/responses/" + unkept).status == 404);
  HttpResult third = post(port, "/v1/responses", {{"input", "Go on."}, {"previous_response_id", second["id"]},
                                                  {"max_output_tokens", 4}, {"temperature", 0}, {"store", false}});
  REQUIRE(third.status == 200);
  json msgs = turn1;
  msgs.push_back({{"role", "assistant"}, {"content", first["output"][0]["content"][0]["text"]}});
  msgs.push_back({{"role", "user"}, {"content", "And then?"}});
  msgs.push_back({{"role", "assistant"}, {"content", second["output"][0]["content"][0]["text"]}});
  msgs.push_back({{"role", "user"}, {"content", "Go on."}});
  const json want = chat(port, {{"max_tokens", 4}, {"temperature", 0}, {"messages", msgs}});
  CHECK(third.json_body()["usage"]["input_tokens"] == want["usage"]["prompt_tokens"]);
  CHECK(third.json_body()["output"][0]["content"][0]["text"] == want["choices"][0]["message"]["content"]);
  // DELETE: gone, and so is what continued from it.
  HttpResult del = request(port, "DELETE", "/v1/responses/" + first["id"].get<std::string>());
  REQUIRE(del.status == 200);
  CHECK(del.json_body()["deleted"] == true);
  CHECK(request(port, "GET", "/v1/responses/" + first["id"].get<std::string>()).status == 404);
  CHECK(request(port, "DELETE", "/v1/responses/" + first["id"].get<std::string>()).status == 404);
  HttpResult gone = post(port, "/v1/responses", {{"input", "x"}, {"previous_response_id", first["id"]}});
  CHECK(gone.status == 404);
  CHECK(gone.json_body()["error"]["param"] == "previous_response_id");
  // Without a job store: nothing is kept, GET says how to turn it on.
  CHECK(request(shared_server().port(), "GET", "/v1/responses/resp_x").status == 404);
}
