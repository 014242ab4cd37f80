#include "model/tokenizer/added_tokens.h"

#include <algorithm>

#include "model/tokenizer/utf8.h"

namespace exspec::tok {
namespace {

// Decodes the code point that ends right before `end`.
uint32_t prev_code_point(std::string_view s, size_t end, size_t& begin) {
  size_t k = end - 1;
  while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
  begin = k;
  size_t i = k;
  return utf8_next(s, i);
}

// Approximation of a "word" character for single_word tokens: letters, digits, '_' and any
// non-ASCII character that is not whitespace.
bool is_word_char(uint32_t cp) {
  if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
  return !is_unicode_whitespace(cp);
}

}  // namespace

void AddedTokens::add(AddedToken t) {
  if (t.content.empty()) return;
  for (auto& old : tokens_) {
    if (old.content == t.content) {
      by_id_.erase(old.id);
      by_id_[t.id] = size_t(&old - tokens_.data());
      old = t;
      has_normalized_ = has_normalized_ || t.normalized;
      max_id_ = std::max(max_id_, t.id);
      return;
    }
  }
  const int32_t index = int32_t(tokens_.size());
  int32_t node = 0;
  for (unsigned char c : t.content) {
    int32_t nx = child(node, c);
    if (nx < 0) {
      nx = int32_t(trie_.size());
      trie_.push_back(Node{});
      trie_[size_t(node)].next.emplace_back(c, nx);
    }
    node = nx;
  }
  trie_[size_t(node)].token = index;
  first_byte_[static_cast<unsigned char>(t.content[0])] = true;
  has_normalized_ = has_normalized_ || t.normalized;
  max_id_ = std::max(max_id_, t.id);
  by_id_[t.id] = size_t(index);
  tokens_.push_back(std::move(t));
}

int32_t AddedTokens::child(int32_t node, unsigned char c) const {
  for (const auto& [b, n] : trie_[size_t(node)].next)
    if (b == c) return n;
  return -1;
}

const AddedToken* AddedTokens::by_content(std::string_view content) const {
  int32_t node = 0;
  for (unsigned char c : content) {
    node = child(node, c);
    if (node < 0) return nullptr;
  }
  const int32_t t = trie_[size_t(node)].token;
  return t < 0 ? nullptr : &tokens_[size_t(t)];
}

bool AddedTokens::word_boundary_ok(std::string_view text, size_t begin, size_t end) const {
  size_t b;
  if (begin > 0 && is_word_char(prev_code_point(text, begin, b))) return false;
  if (end < text.size()) {
    size_t i = end;
    if (is_word_char(utf8_next(text, i))) return false;
  }
  return true;
}

void AddedTokens::split(std::string_view text, bool normalized_pass, bool allow_special,
                        std::vector<Segment>& out) const {
  size_t emitted = 0;  // text before this offset is already in `out`
  size_t pos = 0;
  const size_t n = text.size();
  int32_t found[64];
  while (pos < n) {
    if (!first_byte_[static_cast<unsigned char>(text[pos])]) { ++pos; continue; }
    // Collect every allowed token that starts here, shortest first.
    int nfound = 0;
    int32_t node = 0;
    for (size_t k = pos; k < n; ++k) {
      node = child(node, static_cast<unsigned char>(text[k]));
      if (node < 0) break;
      const int32_t t = trie_[size_t(node)].token;
      if (t < 0) continue;
      const AddedToken& tok = tokens_[size_t(t)];
      if (tok.normalized != normalized_pass || (tok.special && !allow_special)) continue;
      if (nfound < 64) found[nfound++] = t;
    }
    const AddedToken* match = nullptr;
    for (int f = nfound - 1; f >= 0 && !match; --f) {
      const AddedToken& tok = tokens_[size_t(found[f])];
      if (!tok.single_word || word_boundary_ok(text, pos, pos + tok.content.size())) match = &tok;
    }
    if (!match) { ++pos; continue; }
    size_t begin = pos, end = pos + match->content.size();
    if (match->lstrip) {
      while (begin > emitted) {
        size_t b;
        if (!is_unicode_whitespace(prev_code_point(text, begin, b))) break;
        begin = b;
      }
    }
    if (match->rstrip) {
      while (end < n) {
        size_t i = end;
        if (!is_unicode_whitespace(utf8_next(text, i))) break;
        end = i;
      }
    }
    if (begin > emitted) out.push_back(Segment{text.substr(emitted, begin - emitted), nullptr});
    out.push_back(Segment{text.substr(begin, end - begin), match});
    emitted = pos = end;
  }
  if (emitted < n) out.push_back(Segment{text.substr(emitted), nullptr});
}

}  // namespace exspec::tok
