#include "grammar/vocabulary.h"

#include <stdexcept>

namespace exspec::grammar {

std::string special_token_bytes(int32_t id) {
  const auto u = static_cast<uint32_t>(id);
  return std::string{static_cast<char>(kSpecialMarker), static_cast<char>(u >> 24), static_cast<char>(u >> 16),
                     static_cast<char>(u >> 8), static_cast<char>(u)};
}

Vocabulary::Vocabulary(std::vector<std::string> bytes, std::vector<TokenKind> kinds, VocabularyOptions options)
    : bytes_(std::move(bytes)), kinds_(std::move(kinds)), options_(std::move(options)) {
  if (bytes_.size() != kinds_.size()) throw std::invalid_argument("Vocabulary: one kind per token");
  for (size_t i = 0; i < bytes_.size(); ++i) {
    if (kinds_[i] == TokenKind::Special) bytes_[i] = special_token_bytes(static_cast<int32_t>(i));
    else if (kinds_[i] == TokenKind::Text && bytes_[i].find(static_cast<char>(kSpecialMarker)) != std::string::npos)
      bytes_[i].clear();
  }
  std::vector<std::pair<std::string, uint32_t>> text;
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  for (size_t i = 0; i < bytes_.size(); ++i) {
    if (kinds_[i] == TokenKind::End) ends_.push_back(static_cast<int32_t>(i));
    if (kinds_[i] != TokenKind::End && !bytes_[i].empty()) text.emplace_back(bytes_[i], static_cast<uint32_t>(i));
    mix(static_cast<uint64_t>(kinds_[i]) + 7);
    for (unsigned char c : bytes_[i]) mix(c);
    mix(0x1FF);
  }
  mix(options_.strip_first_space ? 3 : 5);
  fingerprint_ = h;
  std::vector<std::pair<std::string, uint32_t>> long_text;
  for (const auto& t : text)
    if (t.first.size() > kShortBytes) long_text.push_back(t);
  long_trie_ = Trie::build(std::move(long_text));
  trie_ = Trie::build(std::move(text));
}

size_t Vocabulary::memory_bytes() const {
  size_t n = trie_.memory_bytes() + long_trie_.memory_bytes() + kinds_.size();
  for (const std::string& b : bytes_) n += sizeof(std::string) + (b.size() > 15 ? b.size() : 0);
  return n;
}

}  // namespace exspec::grammar
