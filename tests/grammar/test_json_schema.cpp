// JSON Schema keywords one by one: texts of valid instances (in the compact form the grammar
// writes) accepted, invalid ones refused; unsupported keywords refused with their path.
#include <catch2/catch.hpp>

#include "grammar/error.h"
#include "grammar/json_schema.h"
#include "tests/grammar/support.h"

using namespace exspec::grammar;
using namespace exspec::grammar::test;

namespace {

void expect(const std::string& schema, const std::vector<std::string>& yes, const std::vector<std::string>& no,
            JsonSchemaOptions o = {}) {
  auto g = CompiledGrammar::compile(grammar_from_json_schema(schema, o), byte_vocab());
  for (const std::string& s : yes) {
    INFO(schema << " should accept " << s);
    CHECK(full_match(g, s));
  }
  for (const std::string& s : no) {
    INFO(schema << " should refuse " << s);
    CHECK_FALSE(full_match(g, s));
  }
}

std::pair<std::string, std::string> refusal(const std::string& schema) {
  try {
    CompiledGrammar::compile(grammar_from_json_schema(schema), byte_vocab());
  } catch (const GrammarError& e) {
    return {e.construct(), e.where()};
  }
  return {"", ""};
}

}  // namespace

TEST_CASE("types, type lists, any value", "[grammar][json]") {
  expect(R"({"type":"string"})", {R"("")", R"("a\"b\\c\u00e9\ud83d\ude00")", "\"\xC3\xA9\""},
         {R"("a)", "\"a\nb\"", R"("\ud83d")", R"("\x")", "1"});
  expect(R"({"type":"integer"})", {"0", "-12", "340282366920938463463374607431768211456"}, {"01", "1.0", "-", "1e5", "+1"});
  expect(R"({"type":"number"})", {"0", "-0.5", "1e-7", "2.5E+10", "-0"}, {".5", "1.", "01", "1e", "NaN"});
  expect(R"({"type":"boolean"})", {"true", "false"}, {"True", "1"});
  expect(R"({"type":"null"})", {"null"}, {"nil", ""});
  expect(R"({"type":["string","null"]})", {"null", R"("x")"}, {"1"});
  expect(R"({})", {"null", "[1,{\"a\":[]}]", R"({"k":"v","k":1})"}, {"[1,]", "{ }", "[1, 2]"});
  expect(R"(true)", {"1", "{}"}, {"tru"});
}

TEST_CASE("objects: order, required, optional, additionalProperties", "[grammar][json]") {
  const std::string s = R"({"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"},"c":{"type":"boolean"}},
                           "required":["b","c"]})";
  expect(s, {R"({"b":1,"a":"x","c":true})", R"({"b":1,"c":false})"},
         {R"({"a":"x","b":1,"c":true})", R"({"b":1})", R"({"b":1,"c":true,"d":1})", R"({"b":1, "c":true})",
          R"({"b":1,"c":true,})"});
  const std::string opt = R"({"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}}})";
  expect(opt, {"{}", R"({"x":1})", R"({"y":2})", R"({"x":1,"y":2})"}, {R"({,"y":2})", R"({"y":2,"x":1})", R"({"z":1})"});
  expect(R"({"properties":{"x":{"type":"integer"}},"additionalProperties":{"type":"string"}})",
         {R"({"x":1,"z":"a","w":"b"})", R"({"z":"a"})", "{}"}, {R"({"z":1})", R"({"x":1,"x":2})"});
  expect(opt, {R"({"x":1,"other":[true]})"}, {}, JsonSchemaOptions{false});
  expect(R"({"type":"object"})", {"{}", R"({"any":{"thing":[1]}})"}, {"[]"});
  expect(R"({"properties":{"q\"/~":{"const":1}},"required":["q\"/~"]})", {R"({"q\"/~":1})"}, {"{}"});
}

TEST_CASE("arrays: items, prefixItems, minItems, maxItems", "[grammar][json]") {
  expect(R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})", {"[1]", "[1,2,3]"}, {"[]", "[1,2,3,4]", "[1,]", "[\"a\"]"});
  expect(R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})",
         {"[]", R"(["a"])", R"(["a",1])"}, {R"(["a",1,2])", "[1]"});
  expect(R"({"type":"array","prefixItems":[{"const":0}],"items":{"type":"boolean"},"minItems":2})",
         {"[0,true]", "[0,true,false]"}, {"[0]", "[]"});
  expect(R"({"type":"array","items":[{"type":"integer"}],"additionalItems":{"type":"string"}})", {R"([1,"a","b"])"}, {R"(["a"])"});
  expect(R"({"type":"array","maxItems":0})", {"[]"}, {"[1]"});
}

TEST_CASE("enum, const", "[grammar][json]") {
  expect(R"({"enum":["red","green",1,null,{"a":[1.0]},1.5]})", {R"("red")", "1", "null", R"({"a":[1]})", "1.5"},
         {R"("blue")", "1.0", R"({"a":[1.0]})"});
  expect(R"({"type":"string","enum":["a",1]})", {R"("a")"}, {"1"});
  expect(R"({"const":"x\ny"})", {R"("x\ny")"}, {"\"x\ny\"", R"("x\u000ay")"});
}

TEST_CASE("strings: length, pattern, formats", "[grammar][json]") {
  expect(R"({"type":"string","minLength":2,"maxLength":3})", {R"("ab")", R"("\u00e9\n\ud83d\ude00")", "\"\xF0\x9F\x98\x80\xC3\xA9\""},
         {R"("a")", R"("abcd")"});
  expect(R"({"type":"string","pattern":"^[A-Z]{2}-\\d+$"})", {R"("AB-12")"}, {R"("ab-12")", R"("AB-")"});
  expect(R"({"type":"string","pattern":"needle"})", {R"("a needle here")", R"("needle")"}, {R"("nedle")"});
  expect(R"({"type":"string","pattern":"^a","maxLength":2})", {R"("a")", R"("ab")"}, {R"("abc")", R"("ba")"});
  expect(R"({"type":"string","format":"date"})", {R"("2024-02-29")", R"("2000-02-29")", R"("1999-12-31")"},
         {R"("2023-02-29")", R"("1900-02-29")", R"("2024-04-31")", R"("0000-01-01")", R"("2024-1-01")"});
  expect(R"({"type":"string","format":"time"})", {R"("23:59:59Z")", R"("08:00:00.123+05:30")"}, {R"("24:00:00Z")", R"("12:00:00")"});
  expect(R"({"type":"string","format":"date-time"})", {R"("2024-01-31T10:20:30-08:00")"}, {R"("2024-01-31 10:20:30Z")"});
  expect(R"({"type":"string","format":"uuid"})", {R"("123e4567-e89b-12d3-a456-426614174000")"}, {R"("123e4567e89b12d3a456426614174000")"});
  expect(R"({"type":"string","format":"email"})", {R"("john.doe+x@mail.example.com")"}, {R"("john@")", R"("@x.com")", R"("a b@c.d")"});
  expect(R"({"type":"string","format":"ipv4"})", {R"("192.168.0.255")"}, {R"("256.1.1.1")", R"("01.1.1.1")"});
}

TEST_CASE("integer and number bounds", "[grammar][json]") {
  auto g = CompiledGrammar::compile(grammar_from_json_schema(R"({"type":"integer","minimum":-15,"exclusiveMaximum":120})"), byte_vocab());
  for (int i = -200; i <= 200; ++i) {
    INFO(i);
    CHECK(full_match(g, std::to_string(i)) == (i >= -15 && i < 120));
  }
  auto n = CompiledGrammar::compile(grammar_from_json_schema(R"({"type":"number","exclusiveMinimum":-2.5,"maximum":10.25})"), byte_vocab());
  for (int i = -400; i <= 1200; ++i) {  // hundredths, written with and without trailing zeros
    const double x = i / 100.0;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", x);
    INFO(buf);
    CHECK(full_match(n, buf) == (x > -2.5 && x <= 10.25));
  }
  expect(R"({"type":"number","minimum":0})", {"0", "0.0", "3.14", "100"}, {"-0", "-1", "-0.0", "1e3"});
  expect(R"({"type":"integer","minimum":2.5,"maximum":4.5})", {"3", "4"}, {"2", "5", "3.0"});
  expect(R"({"type":"integer","minimum":5,"exclusiveMinimum":true})", {"6"}, {"5"});
}

TEST_CASE("$ref, $defs, recursion, anyOf, oneOf, allOf", "[grammar][json]") {
  const std::string tree = R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},
      "kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v","kids"]}},"$ref":"#/$defs/node"})";
  expect(tree, {R"({"v":1,"kids":[]})", R"({"v":1,"kids":[{"v":2,"kids":[{"v":3,"kids":[]}]}]})"}, {R"({"v":1})"});
  expect(R"({"definitions":{"a":{"type":"integer"}},"properties":{"x":{"$ref":"#/definitions/a"}}})", {R"({"x":1})"}, {R"({"x":"a"})"});
  expect(R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})", {"1", R"("a")"}, {R"("ab")"});
  expect(R"({"type":"string","anyOf":[{"maxLength":1},{"pattern":"^x+$"}]})", {R"("a")", R"("xxx")"}, {R"("ab")", "1"});
  expect(R"({"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["kind","x"]},
                      {"type":"object","properties":{"kind":{"const":"b"}},"required":["kind"]}]})",
         {R"({"kind":"a","x":1})", R"({"kind":"b"})"}, {R"({"kind":"c"})"});
  expect(R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},
                      {"properties":{"b":{"type":"string"}},"required":["b"]}]})",
         {R"({"a":1,"b":"x"})"}, {R"({"a":1})", R"({"b":"x","a":1})"});
  expect(R"({"allOf":[{"type":"integer","minimum":0},{"maximum":9}]})", {"0", "9"}, {"10", "-1"});
  expect(R"({"allOf":[{"type":"string","pattern":"^a"},{"pattern":"z$"}]})", {R"("abz")"}, {R"("ab")", R"("bz")"});
}

TEST_CASE("unsupported keywords are refused with their JSON path", "[grammar][json]") {
  using P = std::pair<std::string, std::string>;
  CHECK(refusal(R"({"properties":{"a":{"not":{"type":"string"}}}})") == P{"not", "#/properties/a/not"});
  CHECK(refusal(R"({"type":"array","uniqueItems":true})") == P{"uniqueItems", "#/uniqueItems"});
  CHECK(refusal(R"({"patternProperties":{"^x":{}}})") == P{"patternProperties", "#/patternProperties"});
  CHECK(refusal(R"({"type":"number","multipleOf":3})") == P{"multipleOf", "#/multipleOf"});
  CHECK(refusal(R"({"if":{},"then":{}})").first == "if");
  CHECK(refusal(R"({"type":"string","format":"hostname"})") == P{"format", "#/format"});
  CHECK(refusal(R"({"$ref":"https://example.com/s.json"})") == P{"$ref", "#/$ref"});
  CHECK(refusal(R"({"$ref":"#/$defs/missing"})") == P{"$ref", "#/$ref"});
  CHECK(refusal(R"j({"items":{"pattern":"(?=x)"}})j").first == "lookaround");
  CHECK(refusal(R"({"oneOf":[{"type":"integer"},{"type":"number"}]})") == P{"oneOf", "#/oneOf"});
  CHECK(refusal(R"({"allOf":[{"format":"date"},{"format":"email"}]})").first == "format");
  CHECK(refusal(R"({"propertyNames":{"maxLength":3}})").first == "propertyNames");
  CHECK(refusal(R"({"minProperties":1})").first == "minProperties");
  CHECK(refusal(R"({"frobnicate":1})") == P{"frobnicate", "#/frobnicate"});
  CHECK(refusal(R"({"type":"string","maxLength":100000})") == P{"maxLength", "#/maxLength"});  // counted before it is built
  CHECK(refusal("{not json").first == "schema");
  CHECK(refusal(R"({"title":"x","description":"y","examples":[1],"x-vendor":1,"$comment":"c"})").first.empty());
}

TEST_CASE("schemas that no value satisfies are an error", "[grammar][json]") {
  CHECK_THROWS_AS(CompiledGrammar::compile(grammar_from_json_schema("false"), byte_vocab()), GrammarError);
  CHECK_THROWS_AS(CompiledGrammar::compile(grammar_from_json_schema(R"({"type":"integer","minimum":5,"maximum":4})"), byte_vocab()),
                  GrammarError);
  CHECK_THROWS_AS(CompiledGrammar::compile(grammar_from_json_schema(R"({"type":"array","minItems":3,"maxItems":2})"), byte_vocab()),
                  GrammarError);
}
