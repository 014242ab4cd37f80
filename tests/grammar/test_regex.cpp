// Regular expressions: every supported construct matches what ECMA-262 says, refusals name theirs.
#include <catch2/catch.hpp>

#include "grammar/error.h"
#include "grammar/regex.h"
#include "tests/grammar/support.h"

using namespace exspec::grammar;
using namespace exspec::grammar::test;

namespace {

void expect(const std::string& re, const std::vector<std::string>& yes, const std::vector<std::string>& no) {
  auto g = compile_regex(re);
  for (const std::string& s : yes) {
    INFO("/" << re << "/ should match '" << s << "'");
    CHECK(full_match(g, s));
  }
  for (const std::string& s : no) {
    INFO("/" << re << "/ should not match '" << s << "'");
    CHECK_FALSE(full_match(g, s));
  }
}

std::string refused(const std::string& re) {
  try {
    compile_regex(re);
  } catch (const GrammarError& e) {
    CHECK(e.where().find("offset") != std::string::npos);
    return e.construct();
  }
  return "";
}

}  // namespace

TEST_CASE("regex literals, classes, escapes, dot", "[grammar][regex]") {
  expect("abc", {"abc"}, {"ab", "abcd", "Abc"});
  expect("[a-c]x[^0-9]", {"axy", "cx-"}, {"dxy", "ax5", "ax"});
  expect(R"(\d\w\s\D\W\S)", {"1a a!x", "9_\tb.b"}, {"a1 1a1", "1a ab1"});
  expect(R"(\t\n\x41\u00e9\u{1F600}\.)", {"\t\nA\xC3\xA9\xF0\x9F\x98\x80."}, {"\t\nA\xC3\xA9\xF0\x9F\x98\x80x"});
  expect(R"(\uD83D\uDE00)", {"\xF0\x9F\x98\x80"}, {});
  expect(".", {"a", "\xC3\xA9", "\xF0\x9F\x98\x80", "\t"}, {"\n", "\r", "\xE2\x80\xA8", "", "ab"});
  expect(R"([\d.-]+)", {"1.5", "-2", "..."}, {"a", ""});
  expect(R"([\]\\]+)", {"]\\]"}, {"a"});
  expect("[^a]", {"b", "\xE4\xB8\xAD"}, {"a", ""});
}

TEST_CASE("regex groups, alternation, quantifiers", "[grammar][regex]") {
  expect("(ab|cd)+e?", {"ab", "cdab", "abe"}, {"", "abc", "ee"});
  expect("(?:x|y){2,3}", {"xy", "yyy"}, {"x", "xyxy"});
  expect("(?<year>\\d{4})-(?P<m>\\d{2})", {"2024-01"}, {"24-01"});
  expect("a{3}b{2,}c{0,1}", {"aaabb", "aaabbbc"}, {"aabb", "aaab", "aaabbcc"});
  expect("a*?b+?", {"b", "aab"}, {"a"});
  expect("x{,3}", {"x{,3}"}, {"xxx"});  // not a quantifier: literal braces (ECMA-262 Annex B)
  expect("", {""}, {"a"});
}

TEST_CASE("regex anchors: full match by default, search semantics for JSON Schema patterns", "[grammar][regex]") {
  expect("^abc$", {"abc"}, {"xabc"});
  expect("^a|b$", {"a", "b"}, {"ab"});
  Grammar g;
  g.root = g.add("root", parse_regex("b.d", RegexMode::Search));
  auto c = CompiledGrammar::compile(g, byte_vocab());
  CHECK(full_match(c, "xxbzdyy"));
  CHECK(full_match(c, "bad"));
  CHECK_FALSE(full_match(c, "bd"));
  Grammar a;
  a.root = a.add("root", parse_regex("^b.d", RegexMode::Search));
  auto ca = CompiledGrammar::compile(a, byte_vocab());
  CHECK(full_match(ca, "bad tail"));
  CHECK_FALSE(full_match(ca, "xbad"));
}

TEST_CASE("regex refusals name the construct", "[grammar][regex]") {
  CHECK(refused("a(?=b)") == "lookaround");
  CHECK(refused("(?<!a)b") == "lookaround");
  CHECK(refused("(a)\\1") == "backreference");
  CHECK(refused("\\bword") == "word boundary");
  CHECK(refused("\\p{L}+") == "unicode property");
  CHECK(refused("(?i)abc") == "inline flags");
  CHECK(refused("a*+") == "possessive quantifier");
  CHECK(refused("a^b") == "anchor");
  CHECK(refused("(a$)") == "anchor");
  CHECK(refused("*a") == "quantifier");
  CHECK(refused("(ab") == "group");
  CHECK(refused("[ab") == "class");
  CHECK(refused("a{3,1}") == "quantifier");
  CHECK(refused("\\q") == "escape");
}

TEST_CASE("JSON string content escapes what JSON must, as json.dumps writes it", "[grammar][regex]") {
  Grammar g;
  g.root = g.add("root", json_string_content(parse_regex("[\"\\\\\\n\\x01a]+", RegexMode::FullMatch)));
  auto c = CompiledGrammar::compile(g, byte_vocab());
  CHECK(full_match(c, "\\\"\\\\\\n\\u0001a"));
  CHECK_FALSE(full_match(c, "\""));
  CHECK_FALSE(full_match(c, "\n"));
  CHECK_FALSE(full_match(c, "\\u0061"));  // "a" is written as itself
  CHECK(json_escape_char(0x1F) == "\\u001f");
  CHECK(json_escape_char(0xE9) == "\xC3\xA9");
}
