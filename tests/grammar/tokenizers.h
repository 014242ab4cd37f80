// The real tokenizers of the grammar tests (npm, via tests/tokenizer/fetch.sh and
// tests/grammar/fetch.sh), loaded once per process with their grammar Vocabulary.
#pragma once
#include <memory>
#include <string>

#include "grammar/vocabulary.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec::grammar::test {

struct RealTokenizer {
  Tokenizer tokenizer;
  std::shared_ptr<const Vocabulary> vocab;
};

// "qwen3", "llama3", "llama2" (tests/tokenizer/node_modules) or "llama3_1" (tests/grammar/...).
// Fails the test with the fetch instruction when the file is missing.
const RealTokenizer& real_tokenizer(const std::string& name);

}  // namespace exspec::grammar::test
