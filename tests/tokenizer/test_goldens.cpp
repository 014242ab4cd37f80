// Golden ids and texts from transformers.js (and gpt-3-encoder for GPT-2) over corpus.json,
// for the five real vocabularies: Qwen3, Llama-3, Llama-2/Mistral (SentencePiece-style), Gemma 3
// (SentencePiece-style without a space prefix) and GPT-2.
#include <catch2/catch.hpp>

#include "test_support.h"

using exspec::IncrementalDecoder;
using exspec::Tokenizer;
using tokt::escape;

namespace {

const char* const kVocabs[] = {"qwen3", "llama3", "llama2", "gemma3", "gpt2"};

std::string stream(const Tokenizer& tok, const std::vector<int64_t>& ids, bool skip, bool& all_valid) {
  IncrementalDecoder dec(tok, skip);
  std::string out;
  all_valid = true;
  for (int64_t id : ids) {
    const std::string d = dec.push(id);
    all_valid = all_valid && tokt::valid_utf8(d);
    out += d;
  }
  const std::string d = dec.flush();
  all_valid = all_valid && tokt::valid_utf8(d);
  return out + d;
}

void check_encode(const std::string& vocab) {
  const Tokenizer& tok = tokt::vocab_tokenizer(vocab);
  for (const auto& c : tokt::golden(vocab)["cases"]) {
    const std::string text = c["text"];
    INFO(vocab << " text " << escape(text));
    CHECK(tok.encode(text, /*add_special_tokens=*/true, /*allow_special=*/true) == tokt::ids_of(c["ids"]));
    CHECK(tok.encode(text, /*add_special_tokens=*/false, /*allow_special=*/false) == tokt::ids_of(c["ids_plain"]));
  }
}

void check_decode(const std::string& vocab) {
  const Tokenizer& tok = tokt::vocab_tokenizer(vocab);
  for (const auto& c : tokt::golden(vocab)["cases"]) {
    INFO(vocab << " text " << escape(c["text"]));
    const auto ids = tokt::ids_of(c["ids"]);
    CHECK(escape(tok.decode(ids)) == escape(c["decoded"]));
    CHECK(escape(tok.decode(ids, /*skip_special_tokens=*/true)) == escape(c["decoded_skip"]));
    CHECK(escape(tok.decode(tokt::ids_of(c["ids_plain"]))) == escape(c["decoded_plain"]));
    for (size_t i = 0; i < ids.size(); ++i) {
      INFO("single id " << ids[i]);
      CHECK(escape(tok.decode({ids[i]})) == escape(c["pieces"][i]));
    }
  }
}

// Random ids, many of them lone bytes: ill-formed UTF-8 must become U+FFFD exactly as in
// transformers.js, and streaming must still add up to the full decode.
void check_random(const std::string& vocab) {
  const Tokenizer& tok = tokt::vocab_tokenizer(vocab);
  for (const auto& c : tokt::golden(vocab)["random"]) {
    const auto ids = tokt::ids_of(c["ids"]);
    INFO(vocab << " ids " << c["ids"].dump());
    CHECK(escape(tok.decode(ids)) == escape(c["decoded"]));
    CHECK(escape(tok.decode(ids, true)) == escape(c["decoded_skip"]));
    for (bool skip : {false, true}) {
      bool valid = false;
      CHECK(escape(stream(tok, ids, skip, valid)) == escape(tok.decode(ids, skip)));
      CHECK(valid);
    }
  }
}

void check_round_trip(const std::string& vocab) {
  const Tokenizer& tok = tokt::vocab_tokenizer(vocab);
  // Qwen3's tokenizer normalizes to NFC: its round trip gives the NFC form of the text.
  const bool nfc = vocab == "qwen3";
  for (const auto& c : tokt::golden(vocab)["cases"]) {
    const std::string text = c["text"];
    INFO(vocab << " text " << escape(text));
    const std::string expected = nfc ? c["text_nfc"].get<std::string>() : text;
    CHECK(escape(tok.decode(tok.encode(text, false, false))) == escape(expected));
    CHECK(escape(tok.decode(tok.encode(text, true, true), true)) == escape(c["decoded_skip"]));
  }
}

void check_streaming(const std::string& vocab) {
  const Tokenizer& tok = tokt::vocab_tokenizer(vocab);
  for (const auto& c : tokt::golden(vocab)["cases"]) {
    INFO(vocab << " text " << escape(c["text"]));
    for (const char* key : {"ids", "ids_plain"}) {
      const auto ids = tokt::ids_of(c[key]);
      for (bool skip : {false, true}) {
        INFO(key << (skip ? " skip_special_tokens" : ""));
        bool valid = false;
        CHECK(escape(stream(tok, ids, skip, valid)) == escape(tok.decode(ids, skip)));
        CHECK(valid);
      }
    }
  }
}

}  // namespace

TEST_CASE("golden encode matches transformers.js", "[tokenizer][golden]") {
  for (const char* v : kVocabs) {
    SECTION(v) { check_encode(v); }
  }
}

TEST_CASE("golden decode matches transformers.js", "[tokenizer][golden]") {
  for (const char* v : kVocabs) {
    SECTION(v) { check_decode(v); }
  }
}

TEST_CASE("golden decode of random ids (ill-formed UTF-8) matches transformers.js", "[tokenizer][golden]") {
  for (const char* v : kVocabs) {
    SECTION(v) { check_random(v); }
  }
}

TEST_CASE("encode then decode round-trips the text", "[tokenizer][golden]") {
  for (const char* v : kVocabs) {
    SECTION(v) { check_round_trip(v); }
  }
}

TEST_CASE("streamed deltas concatenate to the full decode", "[tokenizer][golden]") {
  for (const char* v : kVocabs) {
    SECTION(v) { check_streaming(v); }
  }
}

TEST_CASE("real vocabularies: sizes and special tokens from tokenizer_config.json", "[tokenizer][golden]") {
  SECTION("qwen3") {
    const Tokenizer& t = tokt::vocab_tokenizer("qwen3");
    CHECK(t.vocab_size() == 151669);
    CHECK_FALSE(t.bos_id());
    CHECK(t.eos_ids() == std::vector<int64_t>{151645});
    CHECK(t.token_to_id("<|im_end|>") == 151645);
    CHECK(t.is_special(151645));
    CHECK_FALSE(t.is_special(151667));  // <think> is an added, non-special token
    CHECK(t.model_max_length() == 131072);
    CHECK(t.chat_template().find("<|im_start|>") != std::string::npos);
    // Special-token text is plain text unless allowed; <think> is always matched.
    CHECK(t.encode("<|im_end|>", false, false) != std::vector<int64_t>{151645});
    CHECK(t.encode("<|im_end|>", false, true) == std::vector<int64_t>{151645});
    CHECK(t.encode("<think>", false, false) == std::vector<int64_t>{151667});
    CHECK(t.token_to_id("\xC4\xA0hello") == t.encode(" hello", false)[0]);
    CHECK(t.id_to_token(t.encode(" hello", false)[0]) == std::string("\xC4\xA0hello"));
  }
  SECTION("llama3") {
    const Tokenizer& t = tokt::vocab_tokenizer("llama3");
    CHECK(t.vocab_size() == 128256);
    CHECK(t.bos_id() == 128000);
    CHECK(t.eos_ids() == std::vector<int64_t>{128001});
    CHECK_FALSE(t.model_max_length());  // 1e30 means "no limit"
  }
  SECTION("llama2") {
    const Tokenizer& t = tokt::vocab_tokenizer("llama2");
    CHECK(t.vocab_size() == 32000);
    CHECK(t.bos_id() == 1);
    CHECK(t.eos_ids() == std::vector<int64_t>{2});
    CHECK(t.encode("Hi")[0] == 1);  // add_bos_token
    const auto with_bos = t.encode("Hi");
    CHECK(t.encode("Hi", false) == std::vector<int64_t>(with_bos.begin() + 1, with_bos.end()));
    CHECK(t.token_to_id("<0x0A>") == 13);
  }
  SECTION("gemma3") {
    const Tokenizer& t = tokt::vocab_tokenizer("gemma3");
    CHECK(t.vocab_size() == 262145);  // <image_soft_token> (262144) is an added token only
    CHECK(t.bos_id() == 2);
    CHECK(t.eos_ids() == std::vector<int64_t>{106});  // tokenizer_config.json: <end_of_turn>
    CHECK(t.model_max_length() == 32768);
    CHECK(t.token_to_id("<start_of_turn>") == 105);
    CHECK(t.is_special(106));
    // No "▁" before the text (unlike Llama 2): "Hi" is the piece "Hi", " Hi" the piece "▁Hi".
    CHECK(t.encode("Hi") == std::vector<int64_t>{2, *t.token_to_id("Hi")});
    CHECK(t.encode(" Hi", false) == std::vector<int64_t>{*t.token_to_id("\xE2\x96\x81Hi")});
    CHECK(t.decode(t.encode(" Hi")) == "<bos> Hi");
  }
  SECTION("gpt2") {
    const Tokenizer& t = tokt::vocab_tokenizer("gpt2");
    CHECK(t.vocab_size() == 50257);
    CHECK(t.eos_ids() == std::vector<int64_t>{50256});
    CHECK(t.model_max_length() == 1024);
  }
}
