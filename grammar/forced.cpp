// Matcher::forced: the bytes the grammar allows as the only continuation, and their tokens.
#include <algorithm>

#include "grammar/matcher.h"
#include "grammar/trie_walk.h"

namespace exspec::grammar {
namespace {

// Length of the longest prefix of s that ends on a UTF-8 character boundary.
size_t complete_utf8(const std::string& s) {
  size_t i = s.size();
  for (size_t back = 0; back < 4 && i > 0; ++back) {
    const auto c = static_cast<unsigned char>(s[i - 1]);
    if ((c & 0xC0) != 0x80) {  // a lead byte or ASCII: is its character complete?
      const size_t need = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
      return back + 1 >= need ? s.size() : i - 1;
    }
    --i;
  }
  return s.size();
}

}  // namespace

Forced Matcher::forced(size_t max_bytes) {
  Forced f;
  const Entry& e = history_.back();
  if (e.ended) return f;
  Walker& w = walk_->walker();
  const Automaton& a = grammar_->automaton();
  State s = e.stacks, next;
  while (f.bytes.size() < max_bytes) {
    w.expand(s, expanded_);
    if (expanded_.ends) break;
    int only = -1;
    for (int b = 0; b < 256 && only != -2; ++b)
      for (const Stack& r : expanded_.ready)
        if (a.next(r.node, static_cast<uint8_t>(b)) != kDead) {
          only = only == -1 ? b : -2;
          break;
        }
    if (only < 0) break;
    f.bytes.push_back(static_cast<char>(only));
    w.step(expanded_, static_cast<uint8_t>(only), next);
    s.swap(next);
  }
  // Before the first text of a vocabulary that drops its leading space, a token is read without
  // its space: no forced tokens there.
  if (!f.bytes.empty() && !e.strip_pending) f.tokens = tokenize_forced(e.stacks, f.bytes);
  return f;
}

// Special tokens' markers are those tokens; the text between them is the tokenizer's own
// encoding where the vocabulary has one (the tokens the model would write), as far as each token
// is allowed in turn; otherwise the longest token at each point. Stops where a piece cannot be
// covered whole (the text before a marker) or a marker is cut by max_bytes.
std::vector<int32_t> Matcher::tokenize_forced(const State& from, const std::string& bytes) {
  (void)from;  // every prefix of forced bytes is allowed: no check needed below
  const Vocabulary& v = grammar_->vocabulary();
  std::vector<int32_t> out;
  for (size_t at = 0; at < bytes.size();) {
    const size_t mark = bytes.find(static_cast<char>(kSpecialMarker), at);
    const size_t end = mark == std::string::npos ? bytes.size() : mark;
    if (end > at && text_tokens(std::string_view(bytes).substr(at, end - at), out) < end - at) break;
    if (mark == std::string::npos || mark + kSpecialBytes > bytes.size()) break;
    uint32_t id = 0;
    for (size_t k = 1; k < kSpecialBytes; ++k) id = id << 8 | static_cast<uint8_t>(bytes[mark + k]);
    if (id >= v.size() || v.kind(static_cast<int32_t>(id)) != TokenKind::Special) break;
    out.push_back(static_cast<int32_t>(id));
    at = mark + kSpecialBytes;
  }
  return out;
}

// Appends tokens that write a prefix of `text` (no markers in it); returns the bytes covered.
size_t Matcher::text_tokens(std::string_view text, std::vector<int32_t>& out) const {
  const Vocabulary& v = grammar_->vocabulary();
  size_t at = 0;
  if (v.options().encode) {
    const std::string whole(text);
    const size_t n = complete_utf8(whole);
    for (int32_t id : v.options().encode(text.substr(0, n))) {
      if (id < 0 || static_cast<size_t>(id) >= v.size() || v.kind(id) != TokenKind::Text) break;
      const std::string& b = v.bytes(id);
      if (b.empty() || text.compare(at, b.size(), b) != 0) break;
      out.push_back(id);
      at += b.size();
    }
    if (at > 0) return at;
  }
  const Trie& t = v.trie();
  while (at < text.size()) {
    uint32_t node = 0, best = 0;
    size_t best_len = 0;
    for (size_t k = at; k < text.size(); ++k) {  // down the trie along the bytes
      uint32_t child = node + 1, found = 0;
      for (; child < t.end[node]; child = t.end[child])
        if (t.byte[child] == static_cast<uint8_t>(text[k])) {
          found = child;
          break;
        }
      if (!found) break;
      node = found;
      if (t.tok_begin[node + 1] > t.tok_begin[node]) best = node, best_len = k + 1 - at;
    }
    if (best_len == 0) break;
    out.push_back(static_cast<int32_t>(t.toks[t.tok_begin[best]]));
    at += best_len;
  }
  return at;
}

}  // namespace exspec::grammar
