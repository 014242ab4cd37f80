// The byte-level tokenizer.json that `exspec make-model` writes: 256 byte tokens, no merges,
// <s> and </s> as special added tokens, add_bos_token false.
#include <catch2/catch.hpp>

#include "model/tokenizer/byte_level.h"
#include "test_support.h"

using exspec::IncrementalDecoder;
using exspec::Tokenizer;

namespace {

std::string write_own_model() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[exspec::tok::byte_level_chars()[size_t(b)]] = b;
  auto added = [](int id, const char* content) {
    return nlohmann::json{{"id", id}, {"content", content}, {"single_word", false}, {"lstrip", false},
                          {"rstrip", false}, {"normalized", false}, {"special", true}};
  };
  nlohmann::json j = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", {added(256, "<s>"), added(257, "</s>")}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}, {"byte_fallback", false}, {"unk_token", nullptr}}}};
  const std::string dir = tokt::scratch_dir("own-model");
  tokt::write_file(dir + "/tokenizer.json", j.dump(1));
  tokt::write_file(dir + "/tokenizer_config.json",
                   R"({"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": false, "add_eos_token": false,
                       "model_max_length": 2048, "chat_template": "{{ messages }}"})");
  return dir;
}

std::vector<int64_t> bytes_of(const std::string& s) {
  std::vector<int64_t> ids;
  for (unsigned char c : s) ids.push_back(c);
  return ids;
}

}  // namespace

TEST_CASE("own make-model tokenizer loads and maps text to bytes", "[tokenizer][own]") {
  const std::string dir = write_own_model();
  for (const std::string& path : {dir, dir + "/tokenizer.json"}) {
    const Tokenizer t = Tokenizer::load(path);
    CHECK(t.vocab_size() == 258);
    CHECK(t.bos_id() == 256);
    CHECK(t.eos_ids() == std::vector<int64_t>{257});
    CHECK(t.is_special(256));
    CHECK_FALSE(t.is_special(65));
    CHECK(t.model_max_length() == 2048);
    CHECK(t.chat_template() == "{{ messages }}");
    CHECK(t.token_to_id("</s>") == 257);
    CHECK(t.token_to_id("\xC4\xA0") == 32);  // "Ġ" is the byte ' '

    CHECK(t.encode("hello") == bytes_of("hello"));  // add_bos_token false: no BOS
    CHECK(t.encode("h\xC3\xA9 \xF0\x9F\xA6\x99\n") == bytes_of("h\xC3\xA9 \xF0\x9F\xA6\x99\n"));
    CHECK(t.encode("<s>hi</s>", true, true) == std::vector<int64_t>{256, 104, 105, 257});
    CHECK(t.encode("<s>hi</s>", true, false) == bytes_of("<s>hi</s>"));
    CHECK(t.encode("").empty());

    CHECK(t.decode({256, 104, 105, 257}) == "<s>hi</s>");
    CHECK(t.decode({256, 104, 105, 257}, true) == "hi");
    CHECK(t.decode({0xFF, 0x41}) == "\xEF\xBF\xBD" "A");  // ill-formed bytes become U+FFFD
    CHECK(t.decode({0xF0, 0x9F, 0xA6}) == "\xEF\xBF\xBD");  // truncated sequence: one U+FFFD
    CHECK(t.decode({0xF0, 0x9F, 0xA6, 256}) == "\xEF\xBF\xBD<s>");
  }
}

TEST_CASE("own make-model tokenizer: streaming releases only complete characters", "[tokenizer][own]") {
  const Tokenizer t = Tokenizer::load(write_own_model());
  IncrementalDecoder dec(t);
  CHECK(dec.push(0xF0) == "");
  CHECK(dec.push(0x9F) == "");
  CHECK(dec.push(0xA6) == "");
  CHECK(dec.push(0x99) == "\xF0\x9F\xA6\x99");
  CHECK(dec.push('a') == "a");
  CHECK(dec.push(0xE4) == "");
  CHECK(dec.push(0xBD) == "");
  CHECK(dec.push(257) == "\xEF\xBF\xBD</s>");  // an added token ends the incomplete character
  CHECK(dec.push(0xC3) == "");
  CHECK(dec.flush() == "\xEF\xBF\xBD");
  CHECK(dec.push('x') == "x");  // flush starts a new stream
  CHECK(dec.flush() == "");

  // Every split of a mixed text: streamed == full decode, and text round-trips.
  const std::string text = "Gr\xC3\xBC\xC3\x9F" "e \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\xA6\x99<s> \xFF end";
  const auto ids = t.encode(text, false, true);
  std::string streamed;
  IncrementalDecoder d2(t);
  for (int64_t id : ids) {
    const std::string piece = d2.push(id);
    CHECK(tokt::valid_utf8(piece));
    streamed += piece;
  }
  streamed += d2.flush();
  CHECK(streamed == t.decode(ids));
  CHECK(t.decode(ids) == "Gr\xC3\xBC\xC3\x9F" "e \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\xA6\x99<s> \xEF\xBF\xBD end");
}
