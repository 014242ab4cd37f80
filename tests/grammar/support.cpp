#include "tests/grammar/support.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

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

std::vector<int32_t> allowed(const TokenBitset& mask) {
  std::vector<int32_t> out;
  for (size_t w = 0; w < mask.num_words(); ++w)
    for (uint64_t b = mask.words()[w]; b; b &= b - 1) out.push_back(static_cast<int32_t>(w * 64 + __builtin_ctzll(b)));
  return out;
}

std::optional<std::vector<int32_t>> random_walk(const std::shared_ptr<const CompiledGrammar>& g, std::mt19937_64& rng,
                                                int budget) {
  const Vocabulary& v = g->vocabulary();
  Matcher m(g);
  TokenBitset mask(v.size());
  std::vector<int32_t> tokens;
  for (int step = 0; step < budget; ++step) {
    m.fill_mask(mask);
    const std::vector<int32_t> all = allowed(mask);
    REQUIRE(!all.empty());
    std::vector<int32_t> ends, closing;
    for (int32_t t : all) {
      if (v.kind(t) == TokenKind::End) ends.push_back(t);
      else if (v.bytes(t).find_first_of("\"]},") != std::string::npos) closing.push_back(t);
    }
    const std::vector<int32_t>& pool = !ends.empty() && rng() % 4 != 0 ? ends : (!closing.empty() && rng() % 2 ? closing : all);
    const int32_t t = pool[rng() % pool.size()];
    REQUIRE(m.accept(t));
    if (v.kind(t) == TokenKind::End) return tokens;
    tokens.push_back(t);
  }
  return std::nullopt;
}

Verdict validate_with_python(const std::vector<nlohmann::ordered_json>& cases) {
  static int run = 0;
  const std::string path = "grammar_validate_cases_" + std::to_string(run++) + ".jsonl";
  {
    std::ofstream out(path);
    for (const auto& c : cases) out << c.dump() << "\n";
  }
  const std::string cmd = "/usr/bin/python3 " + std::string(EXSPEC_GRAMMAR_VALIDATE_PY) + " " + path;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  REQUIRE(pclose(p) == 0);
  const auto r = nlohmann::ordered_json::parse(out);
  return {r["checked"].get<size_t>(), r["invalid_count"].get<size_t>(), r["invalid"].dump(1)};
}

}  // namespace exspec::grammar::test
