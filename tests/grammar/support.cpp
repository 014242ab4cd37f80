#include "tests/grammar/support.h"

#include "grammar/gbnf.h"
#include "grammar/json_schema.h"

namespace exspec::grammar::test {

std::shared_ptr<const Vocabulary> byte_vocab(const std::vector<std::string>& extra) {
  std::vector<std::string> bytes;
  std::vector<TokenKind> kinds;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b)), kinds.push_back(TokenKind::Text);
  for (const std::string& e : extra) bytes.push_back(e), kinds.push_back(TokenKind::Text);
  bytes.emplace_back("<|end|>");
  kinds.push_back(TokenKind::End);
  bytes.emplace_back("<|special|>");
  kinds.push_back(TokenKind::Special);
  return std::make_shared<Vocabulary>(std::move(bytes), std::move(kinds));
}

int32_t end_token(const Vocabulary& v) { return v.end_tokens().at(0); }

static std::shared_ptr<const Vocabulary> or_bytes(std::shared_ptr<const Vocabulary> v) { return v ? v : byte_vocab(); }

std::shared_ptr<const CompiledGrammar> compile_gbnf(const std::string& text, std::shared_ptr<const Vocabulary> v) {
  return CompiledGrammar::compile(parse_gbnf(text), or_bytes(std::move(v)));
}

std::shared_ptr<const CompiledGrammar> compile_regex(const std::string& pattern, std::shared_ptr<const Vocabulary> v) {
  return CompiledGrammar::compile(grammar_from_regex(pattern), or_bytes(std::move(v)));
}

std::shared_ptr<const CompiledGrammar> compile_schema(const std::string& schema, std::shared_ptr<const Vocabulary> v) {
  return CompiledGrammar::compile(grammar_from_json_schema(schema), or_bytes(std::move(v)));
}

bool full_match(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text) { return matches(*g, text); }

TokenBitset brute_force_mask(const Matcher& m) {
  const size_t n = m.grammar().vocabulary().size();
  TokenBitset out(n);
  for (size_t t = 0; t < n; ++t) {
    Matcher f = m.fork();
    if (f.accept(static_cast<int32_t>(t))) out.set(t);
  }
  return out;
}

}  // namespace exspec::grammar::test
