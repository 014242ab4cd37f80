// The vocabulary adapter against real tokenizers (byte-level BPE: Qwen3, Llama 3; SentencePiece
// with byte fallback: Llama 2), and masks on their full vocabularies against brute force.
#include <catch2/catch.hpp>

#include "grammar/json_schema.h"
#include "model/tokenizer/grammar_vocab.h"
#include "tests/grammar/support.h"
#include "tests/grammar/tokenizers.h"

using namespace exspec::grammar;
using namespace exspec::grammar::test;

namespace {

const char* kSchema = R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},
  "tags":{"type":"array","items":{"enum":["red","green"]},"maxItems":2},"n":{"type":"integer","minimum":-3},
  "when":{"type":"string","format":"date"}},"required":["name","tags","n"]})";
const char* kInstance = R"({"name":"Zoë \"Q\" 中文","tags":["green"],"n":-3,"when":"2024-02-29"})";

// Masks at every token boundary of the tokenizer's own encoding of kInstance equal brute force.
void check_masks_along(const RealTokenizer& t, size_t every) {
  auto g = CompiledGrammar::compile(grammar_from_json_schema(kSchema), t.vocab);
  Matcher m(g);
  const std::vector<int64_t> ids = t.tokenizer.encode(kInstance, false);
  TokenBitset mask(t.vocab->size());
  for (size_t i = 0; i <= ids.size(); ++i) {
    if (i % every == 0 || i == ids.size()) {
      m.fill_mask(mask);
      INFO("after " << i << " tokens");
      CHECK(mask == brute_force_mask(m));
    }
    if (i < ids.size()) REQUIRE(m.accept(static_cast<int32_t>(ids[i])));
  }
  CHECK(m.can_end());
}

}  // namespace

TEST_CASE("token bytes agree with each tokenizer's own decode", "[grammar][tokenizer]") {
  for (const char* name : {"qwen3", "llama3", "llama2"}) {
    const RealTokenizer& t = real_tokenizer(name);
    INFO(name);
    CHECK(vocabulary_mismatches(t.tokenizer, *t.vocab).empty());
    for (int64_t e : t.tokenizer.eos_ids()) CHECK(t.vocab->kind(static_cast<int32_t>(e)) == TokenKind::End);
    size_t special = 0;
    for (size_t i = 0; i < t.vocab->size(); ++i)
      if (t.tokenizer.is_special(static_cast<int64_t>(i))) {
        ++special;
        CHECK(t.vocab->kind(static_cast<int32_t>(i)) != TokenKind::Text);
      }
    CHECK(special > 0);
  }
}

TEST_CASE("byte-level tokens that end inside a character, SentencePiece spaces and byte fallback", "[grammar][tokenizer]") {
  const Vocabulary& l3 = *real_tokenizer("llama3").vocab;
  CHECK_FALSE(l3.options().strip_first_space);
  size_t partial = 0;
  for (size_t i = 0; i < l3.size(); ++i) {
    const std::string& b = l3.bytes(static_cast<int32_t>(i));
    if (l3.kind(static_cast<int32_t>(i)) == TokenKind::Text && !b.empty() && (static_cast<unsigned char>(b.back()) & 0xC0) == 0xC0) ++partial;
  }
  CHECK(partial > 100);  // tokens whose last byte starts a multi-byte character
  const RealTokenizer& l2 = real_tokenizer("llama2");
  CHECK(l2.vocab->options().strip_first_space);
  CHECK(l2.vocab->bytes(static_cast<int32_t>(*l2.tokenizer.token_to_id("<0x0A>"))) == "\n");
  CHECK(l2.vocab->bytes(static_cast<int32_t>(*l2.tokenizer.token_to_id("\xE2\x96\x81the"))) == " the");
}

TEST_CASE("masks equal brute force on real vocabularies", "[grammar][tokenizer][mask]") {
  SECTION("llama2 (SentencePiece, first space dropped)") { check_masks_along(real_tokenizer("llama2"), 1); }
  SECTION("qwen3 (byte-level, 151k)") { check_masks_along(real_tokenizer("qwen3"), 4); }
  SECTION("llama3 (byte-level, 128k)") { check_masks_along(real_tokenizer("llama3"), 4); }
}

TEST_CASE("masks equal brute force where nodes share their short tokens' sets (long counted strings)", "[grammar][tokenizer][mask]") {
  const RealTokenizer& t = real_tokenizer("llama3");
  auto g = CompiledGrammar::compile(grammar_from_json_schema(R"({"type":"string","minLength":3,"maxLength":40})"), t.vocab);
  // Long tokens: runs of spaces and dashes (up to 128 bytes in this vocabulary) fit early, not late.
  const std::string text = "\"" + std::string(20, ' ') + "----------------------------------------------------------------" + "\"";
  Matcher m(g);
  TokenBitset mask(t.vocab->size());
  size_t checked = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i % 3 == 0 || i > 30) {
      m.fill_mask(mask);
      INFO("after " << i << " bytes");
      CHECK(mask == brute_force_mask(m));
      ++checked;
    }
    if (!m.accept_bytes(text.substr(i, 1))) break;  // past maxLength the text is refused
  }
  CHECK(checked > 10);
  CHECK(g->token_sets().walks() < g->automaton().nodes.size());  // classes did share
}

TEST_CASE("the first token may carry the space SentencePiece drops", "[grammar][tokenizer]") {
  const RealTokenizer& t = real_tokenizer("llama2");
  auto g = CompiledGrammar::compile(grammar_from_regex("[a-z]+"), t.vocab);
  Matcher m(g);
  const std::optional<int64_t> spaced = t.tokenizer.token_to_id("\xE2\x96\x81the");
  REQUIRE(spaced);
  TokenBitset mask(t.vocab->size());
  m.fill_mask(mask);
  CHECK(mask.test(static_cast<size_t>(*spaced)));
  CHECK(m.accept(static_cast<int32_t>(*spaced)));
  m.fill_mask(mask);
  CHECK_FALSE(mask.test(static_cast<size_t>(*spaced)));  // only the first text loses its space
  CHECK_FALSE(m.accept(static_cast<int32_t>(*spaced)));
}

TEST_CASE("forced text is tokenized as the tokenizer would", "[grammar][tokenizer][forced]") {
  const RealTokenizer& t = real_tokenizer("llama3");
  auto g = CompiledGrammar::compile(
      grammar_from_json_schema(R"({"type":"object","properties":{"customer_shipping_address":{"type":"string"}},"required":["customer_shipping_address"]})"),
      t.vocab);
  Matcher m(g);
  const Forced f = m.forced();
  CHECK(f.bytes == R"({"customer_shipping_address":")");
  std::vector<int32_t> expected;
  for (int64_t id : t.tokenizer.encode(f.bytes, false)) expected.push_back(static_cast<int32_t>(id));
  CHECK(f.tokens == expected);
  for (int32_t id : f.tokens) CHECK(m.accept(id));
}
