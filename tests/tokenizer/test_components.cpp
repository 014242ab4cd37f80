// Unit tests of the pieces: UTF-8, NFC, BPE merge order, merges formats, SentencePiece-style
// pipeline on a toy vocabulary, added-token flags, and errors for unsupported components.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <thread>

#include "model/tokenizer/unicode_nfc.h"
#include "model/tokenizer/utf8.h"
#include "test_support.h"

using exspec::IncrementalDecoder;
using exspec::Tokenizer;
namespace tok = exspec::tok;

namespace {

int counter = 0;

Tokenizer load_json(const nlohmann::json& j, const std::string& config = "") {
  const std::string dir = tokt::scratch_dir("toy" + std::to_string(counter++));
  tokt::write_file(dir + "/tokenizer.json", j.dump());
  if (!config.empty()) tokt::write_file(dir + "/tokenizer_config.json", config);
  return Tokenizer::load(dir);
}

std::string load_error(const nlohmann::json& j) {
  try {
    load_json(j);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

// A tiny SentencePiece-style tokenizer (as Llama-2 / Mistral): Prepend + Replace normalizers,
// byte fallback, Replace/ByteFallback/Fuse/Strip decoders.
nlohmann::json toy_spm() {
  nlohmann::json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    vocab[name] = 3 + b;
  }
  int id = 259;
  for (const char* t : {"\xE2\x96\x81", "h", "e", "l", "o", "w", "r", "d", "\xE2\x96\x81h", "el", "ll", "lo",
                        "\xE2\x96\x81he", "\xE2\x96\x81hel", "\xE2\x96\x81hell", "\xE2\x96\x81hello", "\xC3\xA9"})
    vocab[t] = id++;
  return {
      {"added_tokens",
       {{{"id", 0}, {"content", "<unk>"}, {"special", true}, {"normalized", false}},
        {{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}},
        {{"id", 2}, {"content", "</s>"}, {"special", true}, {"normalized", false}}}},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
          {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model",
       {{"type", "BPE"}, {"unk_token", "<unk>"}, {"fuse_unk", true}, {"byte_fallback", true}, {"vocab", vocab},
        {"merges", {"\xE2\x96\x81 h", "\xE2\x96\x81h e", "l l", "\xE2\x96\x81he ll", "\xE2\x96\x81hell o", "e l",
                    "l o"}}}}};
}

nlohmann::json toy_bpe(nlohmann::json merges) {
  return {{"added_tokens", nlohmann::json::array()},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "WhitespaceSplit"}}},
          {"post_processor", nullptr},
          {"decoder", nullptr},
          {"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}}}, {"merges", merges}}}};
}

}  // namespace

TEST_CASE("UTF-8: lossy decoding replaces maximal ill-formed subparts", "[tokenizer][unit]") {
  CHECK(tok::utf8_lossy("ok \xC3\xA9") == "ok \xC3\xA9");
  CHECK(tok::utf8_lossy("\xE2\x82") == "\xEF\xBF\xBD");
  CHECK(tok::utf8_lossy("\xF0\x9F\x98" "A") == "\xEF\xBF\xBD" "A");
  CHECK(tok::utf8_lossy("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  CHECK(tok::utf8_lossy("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong
  CHECK(tok::utf8_stable_prefix("ab\xF0\x9F") == 2);
  CHECK(tok::utf8_stable_prefix("ab\xF0\x9F\xA6\x99") == 6);
  CHECK(tok::utf8_stable_prefix("ab\xFF") == 3);
  CHECK_FALSE(tok::utf8_is_valid("a\x80"));
}

TEST_CASE("NFC and NFD", "[tokenizer][unit]") {
  CHECK(tok::nfc("Cafe\xCC\x81") == "Caf\xC3\xA9");
  CHECK(tok::nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8") == "\xEA\xB0\x81");           // Hangul L V T
  CHECK(tok::nfc("e\xCC\x81\xCC\xA3") == "\xE1\xBA\xB9\xCC\x81");                      // reordered marks
  CHECK(tok::nfc("A\xCC\x81\xCC\xA8") == "\xC4\x84\xCC\x81");
  CHECK(tok::nfc("\xE2\x84\xAB") == "\xC3\x85");                                       // Angstrom sign
  CHECK(tok::nfc("\xE0\xA5\x98") == "\xE0\xA4\x95\xE0\xA4\xBC");                       // composition exclusion
  CHECK(tok::nfc("plain ascii") == "plain ascii");
  CHECK(tok::nfd("\xC3\xA9") == "e\xCC\x81");
  CHECK(tok::nfd("\xEA\xB0\x81") == "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8");
}

TEST_CASE("BPE applies merges by rank, in both merges formats", "[tokenizer][unit]") {
  CHECK(load_json(toy_bpe({"a b", "ab c"})).encode("abc") == std::vector<int64_t>{5});
  CHECK(load_json(toy_bpe(nlohmann::json::array({nlohmann::json::array({"a", "b"}), nlohmann::json::array({"ab", "c"})}))).encode("abc") == std::vector<int64_t>{5});
  CHECK(load_json(toy_bpe({"b c", "a b"})).encode("abc") == std::vector<int64_t>{0, 4});
  CHECK(load_json(toy_bpe({"a b"})).encode("abc ab  cab") == std::vector<int64_t>{3, 2, 3, 2, 3});
  const Tokenizer t = load_json(toy_bpe({"a b"}));
  CHECK(t.decode({3, 2}) == "ab c");  // no decoder: tokens joined with spaces
}

TEST_CASE("SentencePiece-style pipeline: prepend, byte fallback, strip", "[tokenizer][unit]") {
  const Tokenizer t = load_json(toy_spm(), R"({"bos_token": "<s>", "eos_token": "</s>"})");
  const auto ids = t.encode("hello world");
  // <s> ▁hello ▁ w o r l d
  CHECK(ids == std::vector<int64_t>{1, 274, 259, 264, 263, 265, 262, 266});
  CHECK(t.decode(ids) == "<s> hello world");
  CHECK(t.decode(ids, true) == "hello world");
  // é is in the vocab, ü is not: byte fallback <0xC3> <0xBC>
  CHECK(t.encode("\xC3\xA9\xC3\xBC", false) == std::vector<int64_t>{259, 275, 3 + 0xC3, 3 + 0xBC});
  CHECK(t.decode(t.encode("  two\xC3\xBC", false)) == "  two\xC3\xBC");
  // Streaming: the leading space of the first token is stripped exactly once.
  IncrementalDecoder d(t, true);
  std::string s;
  for (int64_t id : t.encode(" hi \xF0\x9F\xA6\x99!")) s += d.push(id);
  s += d.flush();
  CHECK(s == " hi \xF0\x9F\xA6\x99!");
  CHECK(s == t.decode(t.encode(" hi \xF0\x9F\xA6\x99!"), true));
  // Special tokens split the text into separately normalized sections.
  CHECK(t.encode("he<s>he", false, true) == std::vector<int64_t>{271, 1, 271});
}

TEST_CASE("Metaspace pre-tokenizer and decoder (prepend_scheme first)", "[tokenizer][unit]") {
  nlohmann::json j = toy_spm();
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "first"}, {"split", true}};
  j["decoder"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "first"}, {"split", true}};
  const Tokenizer t = load_json(j);
  CHECK(t.encode("hello world", false) == std::vector<int64_t>{274, 259, 264, 263, 265, 262, 266});
  CHECK(t.decode(t.encode("hello world", false)) == "hello world");
  // Only the start of the text gets the prefix, not a section after a special token.
  CHECK(t.encode("he<s>he", false, true) == std::vector<int64_t>{271, 1, 260, 261});
  CHECK(t.decode({271, 1, 260, 261}) == "he<s>he");
  IncrementalDecoder d(t);
  CHECK(d.push(271) == "he");
  CHECK(d.push(274) == " hello");
}

TEST_CASE("added tokens: lstrip / rstrip / single_word / normalized", "[tokenizer][unit]") {
  nlohmann::json j = toy_bpe({"a b", "ab c"});
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "\\s+|\\S"}}}, {"behavior", "Isolated"}};
  j["model"]["vocab"][" "] = 6;
  j["added_tokens"] = {
      {{"id", 10}, {"content", "<L>"}, {"special", true}, {"lstrip", true}, {"normalized", false}},
      {{"id", 11}, {"content", "<R>"}, {"special", true}, {"rstrip", true}, {"normalized", false}},
      {{"id", 12}, {"content", "ab"}, {"special", false}, {"single_word", true}, {"normalized", false}},
      {{"id", 13}, {"content", "cc"}, {"special", false}, {"normalized", true}}};
  const Tokenizer t = load_json(j);
  CHECK(t.encode("a  <L>  b", false, true) == std::vector<int64_t>{0, 10, 6, 6, 1});
  CHECK(t.encode("a  <R>  b", false, true) == std::vector<int64_t>{0, 6, 6, 11, 1});
  CHECK(t.encode("ab abc", false, true) == std::vector<int64_t>{12, 6, 0, 1, 2});
  CHECK(t.encode("acc", false, true) == std::vector<int64_t>{0, 13});
  CHECK(t.encode("<L>", false, false) != std::vector<int64_t>{10});
}

TEST_CASE("unsupported components are errors that name them", "[tokenizer][unit]") {
  auto with = [](const char* field, nlohmann::json v) {
    nlohmann::json j = toy_bpe({"a b"});
    j[field] = v;
    return j;
  };
  CHECK_THAT(load_error(with("model", {{"type", "WordPiece"}, {"vocab", {{"a", 0}}}})), Catch::Contains("model type 'WordPiece'"));
  CHECK_THAT(load_error(with("model", {{"type", "Unigram"}, {"vocab", nlohmann::json::array()}})), Catch::Contains("'Unigram'"));
  CHECK_THAT(load_error(with("normalizer", {{"type", "Lowercase"}})), Catch::Contains("normalizer type 'Lowercase'"));
  CHECK_THAT(load_error(with("normalizer", {{"type", "Precompiled"}})), Catch::Contains("'Precompiled'"));
  CHECK_THAT(load_error(with("pre_tokenizer", {{"type", "BertPreTokenizer"}})), Catch::Contains("pre_tokenizer type 'BertPreTokenizer'"));
  CHECK_THAT(load_error(with("decoder", {{"type", "CTC"}})), Catch::Contains("'CTC'"));
  CHECK_THAT(load_error(with("post_processor", {{"type", "Magic"}})), Catch::Contains("post_processor type 'Magic'"));
  CHECK_THAT(load_error(with("pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}})), Catch::Contains("cannot compile regex"));
  CHECK_THAT(load_error(with("model", {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", {"a b"}}})), Catch::Contains("merge #0"));
  CHECK_THAT(load_error(nlohmann::json{{"nomodel", 1}}), Catch::Contains("has no 'model'"));
  CHECK_THROWS_WITH(Tokenizer::load("/nonexistent/dir"), Catch::Contains("does not exist"));
}

TEST_CASE("tokenizer is usable from several threads", "[tokenizer][unit]") {
  const Tokenizer t = load_json(toy_bpe({"a b", "ab c"}));
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i)
        if (t.encode("abc ab c" + std::string(size_t(i % 7), 'a')).size() < 3) ++bad;
    });
  for (auto& th : threads) th.join();
  CHECK(bad == 0);
}
