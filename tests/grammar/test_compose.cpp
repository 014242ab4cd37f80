// Grammars made of grammars (compose.h, GrammarRequest's compositions): literal text and special
// tokens around JSON schemas, alternatives, repetition with a separator; special tokens allowed
// exactly where a composition writes them, never by text or by a client's grammar.
#include <catch2/catch.hpp>

#include "grammar/compose.h"
#include "grammar/error.h"
#include "grammar/gbnf.h"
#include "grammar/grammar_cache.h"
#include "grammar/json_schema.h"
#include "tests/grammar/support.h"

using namespace exspec::grammar;
using namespace exspec::grammar::test;

namespace {

int32_t special_id(const Vocabulary& v) { return static_cast<int32_t>(v.size() - 1); }  // byte_vocab's <|special|>

// Accepts `text` byte by byte, with the special token where `text` holds its marker.
bool accept_text(Matcher& m, const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) == kSpecialMarker) {
      uint32_t id = 0;
      for (size_t k = 1; k < kSpecialBytes; ++k) id = id << 8 | static_cast<uint8_t>(text[i + k]);
      if (!m.accept(static_cast<int32_t>(id))) return false;
      i += kSpecialBytes - 1;
    } else if (!m.accept(static_cast<unsigned char>(text[i]))) {
      return false;
    }
  }
  return true;
}

// Every mask along `text` equals brute force, and the text is accepted whole.
void masks_along(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text) {
  Matcher m(g);
  TokenBitset mask(g->vocabulary().size());
  for (size_t i = 0; i <= text.size(); ++i) {
    m.fill_mask(mask);
    REQUIRE(mask == brute_force_mask(m));
    if (i == text.size()) break;
    const size_t n = static_cast<unsigned char>(text[i]) == kSpecialMarker ? kSpecialBytes : 1;
    REQUIRE(accept_text(m, text.substr(i, n)));
    i += n - 1;
  }
  CHECK(m.can_end());
}

GrammarRequest schema(const std::string& s) { return GrammarRequest::json_schema(s); }
GrammarRequest text(const std::string& s) { return GrammarRequest::literal(s); }

}  // namespace

TEST_CASE("compose: a special token is allowed exactly where the grammar writes it", "[grammar][compose]") {
  auto v = byte_vocab();
  const int32_t sp = special_id(*v);
  const std::string marker = special_token_bytes(sp);
  REQUIRE(marker.size() == kSpecialBytes);
  const Grammar g = concat({literal_grammar("<a>"), special_token_grammar(sp),
                            grammar_from_json_schema(R"({"type": "integer", "minimum": 0, "maximum": 99})")});
  auto cg = CompiledGrammar::compile(g, v);
  CHECK(full_match(cg, "<a>" + marker + "42"));
  CHECK_FALSE(full_match(cg, "<a>42"));
  CHECK_FALSE(full_match(cg, "<a>" + marker));
  masks_along(cg, "<a>" + marker + "7");

  Matcher m(cg);
  TokenBitset mask(v->size());
  CHECK_FALSE(m.accept(sp));  // not before "<a>"
  REQUIRE(accept_text(m, "<a>"));
  m.fill_mask(mask);
  CHECK(mask.count() == 1);
  CHECK(mask.test(static_cast<size_t>(sp)));
  CHECK_FALSE(m.accept(0xFF));  // the byte 0xFF is no text: it cannot spell the marker
  REQUIRE(m.accept(sp));
  CHECK_FALSE(m.accept(sp));
  m.fill_mask(mask);
  CHECK_FALSE(mask.test(static_cast<size_t>(sp)));
  m.rollback(1);
  m.fill_mask(mask);
  CHECK(mask.test(static_cast<size_t>(sp)));
}

TEST_CASE("compose: no client grammar reaches a special token, literals holding 0xFF are refused", "[grammar][compose]") {
  auto v = byte_vocab();
  const int32_t sp = special_id(*v);
  // \xFF in GBNF is the character U+00FF (C3 BF in UTF-8), and '.' any character: never the marker.
  for (const char* gbnf : {R"(root ::= "\xFF"*)", R"(root ::= .*)", R"(root ::= [^a]*)"}) {
    auto g = compile_gbnf(gbnf, v);
    Matcher m(g);
    TokenBitset mask(v->size());
    m.fill_mask(mask);
    CHECK_FALSE(mask.test(static_cast<size_t>(sp)));
    CHECK_FALSE(mask.test(0xFF));
    CHECK_FALSE(m.accept(sp));
  }
  auto any = CompiledGrammar::compile(grammar_from_regex(".*"), v);
  Matcher m(any);
  CHECK_FALSE(m.accept(sp));
  CHECK_THROWS_AS(literal_grammar("a\xFF"), GrammarError);
}

TEST_CASE("compose: alternatives and repetition with a separator", "[grammar][compose]") {
  const Grammar call_a = concat({literal_grammar("a("), grammar_from_json_schema(R"({"type": "boolean"})"), literal_grammar(")")});
  const Grammar call_b = concat({literal_grammar("b("), grammar_from_json_schema(R"({"enum": [1, 2]})"), literal_grammar(")")});
  auto one = CompiledGrammar::compile(repeated(one_of({call_a, call_b}), literal_grammar(", "), 1, 1), byte_vocab());
  CHECK(full_match(one, "a(true)"));
  CHECK(full_match(one, "b(2)"));
  CHECK_FALSE(full_match(one, "a(true), b(1)"));
  CHECK_FALSE(full_match(one, "a(1)"));
  CHECK_FALSE(full_match(one, ""));
  auto two = CompiledGrammar::compile(repeated(one_of({call_a, call_b}), literal_grammar(", "), 1, 2), byte_vocab());
  CHECK(full_match(two, "a(true), b(1)"));
  CHECK_FALSE(full_match(two, "a(true), b(1), a(false)"));
  CHECK_FALSE(full_match(two, "a(true),b(1)"));
  auto many = CompiledGrammar::compile(repeated(one_of({call_a, call_b}), literal_grammar("\n"), 1, -1), byte_vocab());
  CHECK(full_match(many, "a(true)\nb(1)\nb(2)\na(false)"));
  CHECK_FALSE(full_match(many, "a(true)\n"));
  masks_along(many, "a(false)\nb(2)");
  CHECK_THROWS_AS(repeated(call_a, literal_grammar(""), 0, 1), GrammarError);
  CHECK_THROWS_AS(one_of({}), GrammarError);
}

TEST_CASE("compose: recursive schemas inside a composition keep their rules", "[grammar][compose]") {
  auto v = byte_vocab({"<call>", "</call>", "{\"", "\":"});
  const std::string tree = R"({"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}},
                               "required": ["kids"]})";
  auto g = CompiledGrammar::compile(
      repeated(concat({literal_grammar("<call>"), grammar_from_json_schema(tree), literal_grammar("</call>")}),
               literal_grammar(";"), 1, -1), v);
  CHECK(full_match(g, R"(<call>{"kids":[{"kids":[]}]}</call>;<call>{"kids":[]}</call>)"));
  CHECK_FALSE(full_match(g, R"(<call>{"kids":[{"kid":[]}]}</call>)"));
  masks_along(g, R"(<call>{"kids":[{"kids":[]},{"kids":[]}]}</call>;<call>{"kids":[]}</call>)");
}

TEST_CASE("compose: forced continuations run through special tokens, as those tokens", "[grammar][compose][forced]") {
  auto v = byte_vocab({"ab", "cd"});
  const int32_t sp = special_id(*v);
  auto g = CompiledGrammar::compile(
      concat({literal_grammar("ab"), special_token_grammar(sp), literal_grammar("cd"), grammar_from_regex("[xy]")}), v);
  Matcher m(g);
  Forced f = m.forced();
  CHECK(f.bytes == "ab" + special_token_bytes(sp) + "cd");
  CHECK(f.tokens == std::vector<int32_t>{256, sp, 257});
  // Cut inside the marker: the tokens stop before it.
  f = m.forced(4);
  CHECK(f.tokens == std::vector<int32_t>{256});
  REQUIRE(m.accept(256));
  REQUIRE(m.accept(sp));
  f = m.forced();
  CHECK(f.bytes == "cd");
}

TEST_CASE("compose: requests' keys tell compositions apart, the cache compiles them", "[grammar][compose][cache]") {
  auto req = [](int max, const std::string& sep) {
    return GrammarRequest::repeat(GrammarRequest::alternatives({GrammarRequest::sequence({text("a"), schema(R"({"type":"integer"})")}),
                                                                GrammarRequest::sequence({text("b"), GrammarRequest::special_token(257)})}),
                                  text(sep), 1, max);
  };
  CHECK(req(1, ",").canonical() == req(1, ",").canonical());
  CHECK(req(1, ",").canonical() != req(2, ",").canonical());
  CHECK(req(1, ",").canonical() != req(1, ";").canonical());
  CHECK(GrammarRequest::sequence({text("ab"), text("c")}).canonical() != GrammarRequest::sequence({text("a"), text("bc")}).canonical());
  CHECK(GrammarRequest::sequence({schema(R"({"type": "integer"})")}).canonical() ==
        GrammarRequest::sequence({schema(R"({"type":"integer"})")}).canonical());
  GrammarCache cache(byte_vocab(), 4);
  auto g = cache.get(req(-1, ","));
  CHECK(cache.get(req(-1, ",")) == g);
  CHECK(cache.stats().misses == 1);
  CHECK(full_match(g, "a12,b" + special_token_bytes(257) + ",a-3"));
  CHECK_FALSE(full_match(g, "a12,"));
  // A part's error surfaces as itself.
  try {
    cache.get(GrammarRequest::sequence({text("x"), schema(R"({"type": "object", "properties": {"a": {"not": {}}}})")}));
    FAIL("accepted");
  } catch (const GrammarError& e) {
    CHECK(e.construct() == "not");
    CHECK(e.where() == "#/properties/a/not");
  }
}
