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

// The tokenizer's own encoding where the vocabulary has one (the tokens the model would write),
// as far as each token is allowed in turn; otherwise the longest token at each point.
std::vector<int32_t> Matcher::tokenize_forced(const State& from, const std::string& bytes) {
  const Vocabulary& v = grammar_->vocabulary();
  std::vector<int32_t> out;
  if (v.options().encode) {
    const size_t n = complete_utf8(bytes);
    size_t at = 0;
    for (int32_t id : v.options().encode(std::string_view(bytes).substr(0, n))) {
      if (id < 0 || static_cast<size_t>(id) >= v.size() || v.kind(id) != TokenKind::Text) break;
      const std::string& b = v.bytes(id);
      if (b.empty() || bytes.compare(at, b.size(), b) != 0) break;
      out.push_back(id);
      at += b.size();
    }
    if (!out.empty()) return out;
  }
  (void)from;  // every prefix of forced bytes is allowed: no check needed below
  const Trie& t = v.trie();
  for (size_t at = 0; at < bytes.size();) {
    uint32_t node = 0, best = 0;
    size_t best_len = 0;
    for (size_t k = at; k < bytes.size(); ++k) {  // down the trie along the bytes
      uint32_t child = node + 1, found = 0;
      for (; child < t.end[node]; child = t.end[child])
        if (t.byte[child] == static_cast<uint8_t>(bytes[k])) {
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
  return out;
}

}  // namespace exspec::grammar
