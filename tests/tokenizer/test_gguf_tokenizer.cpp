// The tokenizer a GGUF file carries (tokenizer.ggml.*), written by tests/gguf/write_gguf.py from
// real tokenizer.json files as llama.cpp's converter writes it: the same ids and text as the
// tokenizer.json path on the whole test corpus, the same special tokens and chat template.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/tokenizer/test_support.h"

namespace {

// write_gguf.py's output for a tokenizer.json (and the tokenizer_config.json beside it).
std::string gguf_of(const std::string& vocab, const std::string& extra = "") {
  const std::string dir = tokt::vocab_path(vocab);
  const std::string out = tokt::scratch_dir("gguf") + "/" + vocab + (extra.empty() ? "" : "-x") + ".gguf";
  if (!std::filesystem::exists(out)) {
    const std::string cmd = "/usr/bin/python3 " EXSPEC_GGUF_TOOLS "/write_gguf.py " + dir + "/tokenizer.json " + out + " " +
                            extra + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    std::string log;
    char buf[512];
    while (fgets(buf, sizeof buf, p)) log += buf;
    if (pclose(p) != 0) FAIL(cmd << "\n" << log);
  }
  return out;
}

const nlohmann::json& corpus() {
  static const nlohmann::json c = [] {
    std::ifstream f(tokt::source_dir() + "/corpus.json");
    std::stringstream s;
    s << f.rdbuf();
    return nlohmann::json::parse(s.str());
  }();
  return c;
}

}  // namespace

TEST_CASE("a GGUF file's tokenizer gives the tokenizer.json path's ids on the corpus", "[gguf]") {
  for (const char* vocab : {"qwen3", "llama3", "gpt2", "llama2", "gemma3"}) {
    INFO(vocab);
    const exspec::Tokenizer& hf = tokt::vocab_tokenizer(vocab);
    const exspec::Tokenizer gg = exspec::Tokenizer::load(gguf_of(vocab));
    CHECK(gg.vocab_size() == hf.vocab_size());
    CHECK(gg.bos_id() == hf.bos_id());
    // This Llama 3 tokenizer.json's post-processor adds no BOS and its config has no
    // add_bos_token, so the converter writes none either, and a GGUF reader adds BOS as
    // llama.cpp does for llama-bpe (its shouldPrependBosToken is true for this file).
    const bool bos_added_by_gguf_only = std::string(vocab) == "llama3";
    CHECK(gg.eos_ids() == hf.eos_ids());
    CHECK(gg.chat_template() == hf.chat_template());
    int64_t ids = 0;
    for (const auto& text_json : corpus()) {
      const std::string text = text_json.get<std::string>();
      INFO(tokt::escape(text.substr(0, 60)));
      for (bool special : {false, true}) {
        auto want = hf.encode(text, true, special);
        if (bos_added_by_gguf_only) want.insert(want.begin(), *hf.bos_id());
        const auto got = gg.encode(text, true, special);
        CHECK(gg.encode(text, false, special) == hf.encode(text, false, special));
        CHECK(got == want);
        CHECK(gg.decode(got) == hf.decode(want));
        ids += static_cast<int64_t>(want.size());
      }
    }
    CHECK(ids > 1000);
  }
}

TEST_CASE("a GGUF tokenizer with a pre-tokenizer not known is refused naming it", "[gguf]") {
  CHECK_THROWS_WITH(exspec::Tokenizer::load(gguf_of("qwen3", "--pre deepseek-llm")),
                    Catch::Contains("pre-tokenizer \"deepseek-llm\" is not known (known: gpt-2, llama-bpe, qwen2)"));
}
