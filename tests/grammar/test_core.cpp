// The automaton and the Matcher on small grammars with a byte vocabulary: accept, rollback,
// can_end, masks against brute force, forced continuations, refusals.
#include <catch2/catch.hpp>

#include "grammar/error.h"
#include "grammar/gbnf.h"
#include "tests/grammar/support.h"

using namespace exspec::grammar;
using namespace exspec::grammar::test;

namespace {

int32_t tok(char c) { return static_cast<unsigned char>(c); }

bool accept_text(Matcher& m, const std::string& s) {
  for (char c : s)
    if (!m.accept(tok(c))) return false;
  return true;
}

}  // namespace

TEST_CASE("a matcher accepts exactly the grammar's texts", "[grammar][matcher]") {
  auto g = compile_gbnf(R"(root ::= "ab" [0-9]+ ("x" | "yz")?)");
  CHECK(full_match(g, "ab1"));
  CHECK(full_match(g, "ab123yz"));
  CHECK(full_match(g, "ab9x"));
  CHECK_FALSE(full_match(g, "ab"));
  CHECK_FALSE(full_match(g, "ab1y"));
  CHECK_FALSE(full_match(g, "ab1xz"));
  Matcher m(g);
  CHECK_FALSE(m.accept(tok('b')));
  CHECK(m.accepted() == 0);
  CHECK(accept_text(m, "ab1"));
  CHECK(m.can_end());
  CHECK(m.accept(tok('y')));
  CHECK_FALSE(m.can_end());
  CHECK_FALSE(m.accept(end_token(g->vocabulary())));
  CHECK(m.accept(tok('z')));
  CHECK(m.accept(end_token(g->vocabulary())));
  CHECK(m.ended());
  CHECK_FALSE(m.accept(tok('x')));
}

TEST_CASE("rollback restores earlier states exactly", "[grammar][matcher]") {
  auto g = compile_gbnf(R"(root ::= "{" item ("," item)* "}"
item ::= "[" root? "]" | [a-c]+)");
  Matcher m(g);
  REQUIRE(accept_text(m, "{[{a,b"));
  TokenBitset before(g->vocabulary().size()), after(g->vocabulary().size());
  m.fill_mask(before);
  REQUIRE(accept_text(m, "}],c"));
  m.rollback(4);
  CHECK(m.accepted() == 6);
  m.fill_mask(after);
  CHECK(before == after);
  CHECK_THROWS(m.rollback(7));
  m.rollback(6);
  CHECK(accept_text(m, "{[]}"));
  CHECK(m.can_end());
}

TEST_CASE("masks equal brute force on recursive grammars and multi-byte tokens", "[grammar][mask]") {
  auto v = byte_vocab({"ab", "abc", "},", "]}", "{[", "\xC3", "\xA9x", "\xC3\xA9", "a]", ",[", "[]", "]]]"});
  auto g = compile_gbnf(R"(root ::= "{" item ("," item)* "}"
item ::= "[" root? "]" | [a-cé]+)", v);
  const std::vector<std::string> walks{"", "{", "{a", "{[", "{[{", "{[{ab", "{[{ab}", "{[{ab}]", "{\xC3", "{\xC3\xA9", "{a,"};
  for (const std::string& w : walks) {
    Matcher m(g);
    REQUIRE(m.accept_bytes(w));
    TokenBitset mask(v->size());
    m.fill_mask(mask);
    INFO("after '" << w << "'");
    CHECK(mask == brute_force_mask(m));
  }
}

TEST_CASE("a token may end inside a UTF-8 character", "[grammar][matcher]") {
  auto v = byte_vocab({"\xE2\x82", "\xAC!"});  // "€!" split inside the euro sign
  auto g = compile_gbnf(R"(root ::= [€$] "!")", v);
  Matcher m(g);
  CHECK(m.accept(256));
  CHECK_FALSE(m.can_end());
  CHECK(m.accept(257));
  CHECK(m.can_end());
}

TEST_CASE("special tokens are never allowed, end tokens only where the grammar may end", "[grammar][mask]") {
  auto g = compile_gbnf(R"(root ::= "a"+)");
  const Vocabulary& v = g->vocabulary();
  const int32_t special = static_cast<int32_t>(v.size() - 1);
  Matcher m(g);
  TokenBitset mask(v.size());
  m.fill_mask(mask);
  CHECK_FALSE(mask.test(static_cast<size_t>(end_token(v))));
  CHECK_FALSE(mask.test(static_cast<size_t>(special)));
  CHECK(mask.count() == 1);
  REQUIRE(m.accept(tok('a')));
  m.fill_mask(mask);
  CHECK(mask.test(static_cast<size_t>(end_token(v))));
  CHECK_FALSE(mask.test(static_cast<size_t>(special)));
  CHECK_FALSE(m.accept(special));
}

TEST_CASE("forced continuations: the only bytes allowed, as tokens each allowed in turn", "[grammar][forced]") {
  auto v = byte_vocab({"{\"", "name", "\":", "\"name\":\""});
  auto g = compile_gbnf(R"(root ::= "{\"name\":\"" [a-z]+ "\",\"age\":" [0-9]+ "}")", v);
  Matcher m(g);
  Forced f = m.forced();
  CHECK(f.bytes == "{\"name\":\"");
  REQUIRE(f.tokens.size() == 4);  // longest match without a tokenizer: {" name ": "
  std::string joined;
  for (int32_t t : f.tokens) {
    joined += v->bytes(t);
    CHECK(m.accept(t));
  }
  CHECK(f.bytes.rfind(joined, 0) == 0);
  CHECK(m.forced().bytes.empty());  // [a-z]+ is a choice
  REQUIRE(accept_text(m, "bob"));
  CHECK(m.forced().bytes.empty());  // more letters, or the quote
  REQUIRE(m.accept(tok('"')));
  CHECK(m.forced().bytes == ",\"age\":");
  REQUIRE(accept_text(m, ",\"age\":4"));
  CHECK(m.forced().bytes.empty());  // a digit or "}"
}

TEST_CASE("GBNF syntax: comments, continuations, repetitions, escapes", "[grammar][gbnf]") {
  auto g = compile_gbnf(R"(# a comment
root ::= greeting " " name{1,3} "\n"   # trailing comment
greeting ::= "hi"
  | "hello"
name ::= (
  [A-Z] [a-z]*
  "-"?
)
)");
  CHECK(full_match(g, "hi Bob\n"));
  CHECK(full_match(g, "hello Ann-Eve-Cy\n"));
  CHECK_FALSE(full_match(g, "hello Ann-Eve-Cy-Di\n"));
  CHECK_FALSE(full_match(g, "hey Bob\n"));
  auto esc = compile_gbnf(R"(root ::= "\x41\u00e9\U0001F600\t" [^\n\]]+)");
  CHECK(full_match(esc, "A\xC3\xA9\xF0\x9F\x98\x80\tzz"));
  CHECK_FALSE(full_match(esc, "A\xC3\xA9\xF0\x9F\x98\x80\tz]"));
}

TEST_CASE("GBNF errors name the construct and its line", "[grammar][gbnf]") {
  auto refuse = [](const std::string& text, const std::string& construct) {
    try {
      compile_gbnf(text);
    } catch (const GrammarError& e) {
      INFO(e.what());
      CHECK(e.construct() == construct);
      CHECK(!std::string(e.what()).empty());
      return;
    }
    FAIL("no error for: " << text);
  };
  refuse("root ::= expr\nexpr ::= expr \"+\" \"1\" | \"1\"", "left recursion");
  refuse("root ::= undefined-rule", "undefined-rule");
  refuse("item ::= \"a\"", "root");
  refuse("root ::= <[123]>", "token reference");
  refuse("root ::= (= \"a\") \"b\"", "lookahead");
  refuse("root ::= \"a\"\nroot ::= \"b\"", "syntax");
  refuse("root ::= x\nx ::= \"a\" x", "empty");  // no finite text
}

TEST_CASE("accept_prefix stops at the first refused token, apply_mask leaves allowed logits alone", "[grammar][matcher]") {
  auto g = compile_gbnf(R"(root ::= "ab" [0-9]*)");
  Matcher m(g);
  const std::vector<int32_t> drafts{tok('a'), tok('b'), tok('1'), tok('x'), tok('2')};
  CHECK(m.accept_prefix(drafts.data(), drafts.size()) == 3);
  CHECK(m.accepted() == 3);
  m.rollback(1);
  TokenBitset mask(g->vocabulary().size());
  m.fill_mask(mask);
  std::vector<double> logits(g->vocabulary().size(), 1.0);
  apply_mask(mask, logits.data(), logits.size());
  CHECK(logits[static_cast<size_t>(tok('7'))] == 1.0);
  CHECK(logits[static_cast<size_t>(tok('x'))] == -std::numeric_limits<double>::infinity());
  CHECK(logits[static_cast<size_t>(end_token(g->vocabulary()))] == 1.0);
}
