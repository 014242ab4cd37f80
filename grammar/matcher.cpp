#include "grammar/matcher.h"

#include <stdexcept>

#include "grammar/trie_walk.h"

namespace exspec::grammar {

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> grammar)
    : grammar_(std::move(grammar)), frames_(std::make_unique<Frames>()),
      walk_(std::make_unique<TrieWalk>(grammar_->automaton(), *frames_)) {
  Entry start;
  start.stacks = State{walk_->walker().settle(Stack{grammar_->start_node(), kNoFrame})};
  start.strip_pending = grammar_->vocabulary().options().strip_first_space;
  history_.push_back(std::move(start));
}

Matcher::~Matcher() = default;
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;

Matcher Matcher::fork() const {
  Matcher m(grammar_);
  *m.frames_ = *frames_;
  m.history_ = history_;
  return m;
}

bool Matcher::advance(Entry& e, std::string_view bytes) {
  if (e.ended) return false;
  if (bytes.empty()) return true;
  if (e.strip_pending) {
    e.strip_pending = false;
    if (bytes[0] == ' ') bytes.remove_prefix(1);
  }
  return walk_->walker().advance(e.stacks, bytes.data(), bytes.size());
}

bool Matcher::accept(int32_t token) {
  const Vocabulary& v = grammar_->vocabulary();
  if (token < 0 || static_cast<size_t>(token) >= v.size()) return false;
  const Entry& now = history_.back();
  if (now.ended) return false;
  switch (v.kind(token)) {
    case TokenKind::End: {
      if (!can_end()) return false;
      Entry e = history_.back();
      e.ended = true;
      history_.push_back(std::move(e));
      return true;
    }
    case TokenKind::Text:
    case TokenKind::Special: break;  // its marker: allowed only where a grammar writes it
  }
  if (v.bytes(token).empty()) return false;
  Entry e = now;
  if (!advance(e, v.bytes(token))) return false;
  history_.push_back(std::move(e));
  return true;
}

size_t Matcher::accept_prefix(const int32_t* tokens, size_t n) {
  size_t k = 0;
  while (k < n && accept(tokens[k])) ++k;
  return k;
}

bool Matcher::accept_bytes(std::string_view bytes) {
  Entry e = history_.back();
  if (!advance(e, bytes)) return false;
  history_.push_back(std::move(e));
  return true;
}

void Matcher::rollback(size_t n) {
  if (n > accepted()) throw std::out_of_range("Matcher::rollback: more tokens than were accepted");
  history_.resize(history_.size() - n);
}

bool Matcher::can_end() {
  const Entry& e = history_.back();
  if (e.ended) return false;
  walk_->walker().expand(e.stacks, expanded_);
  return expanded_.ends;
}

void Matcher::add_stack(const Stack& s, TokenBitset& mask) {
  const NodeTokens& nt = grammar_->token_sets().at(s.node);
  add_sets(nt, s, mask);
  if (nt.shared) add_sets(*nt.shared, s, mask);
}

void Matcher::add_sets(const NodeTokens& nt, const Stack& s, TokenBitset& mask) {
  nt.accepted.or_into(mask);
  if (s.parent == kNoFrame || (!nt.from_start && nt.continuing.size() <= 1)) return;
  // Tokens that end the node's rule and go on below it: walked from the stack below.
  const State below{frames_->at(s.parent)};
  auto set_tokens = [&mask](const Trie& t) {
    return [&mask, &t](uint32_t i, uint32_t) {
      for (uint32_t k = t.tok_begin[i]; k < t.tok_begin[i + 1]; ++k) mask.set(t.toks[k]);
    };
  };
  auto ignore = [](uint32_t, uint32_t) {};
  if (nt.continuing.size() > 1) walk_->run(nt.continuing, 0, below, set_tokens(nt.continuing), ignore);
  if (nt.from_start) walk_->run(grammar_->vocabulary().trie(), 0, below, set_tokens(grammar_->vocabulary().trie()), ignore);
}

void Matcher::add_stripped(const State& state, TokenBitset& mask) {
  // The first token's leading space is not written: " X" is allowed where X is.
  const Trie& t = grammar_->vocabulary().trie();
  for (uint32_t j = 1; j < t.end[0]; j = t.end[j]) {
    if (t.byte[j] != ' ') continue;
    for (uint32_t k = t.tok_begin[j]; k < t.tok_begin[j + 1]; ++k) mask.set(t.toks[k]);
    walk_->run(t, j, state, [&](uint32_t i, uint32_t) {
      for (uint32_t k = t.tok_begin[i]; k < t.tok_begin[i + 1]; ++k) mask.set(t.toks[k]);
    }, [](uint32_t, uint32_t) {});
  }
}

void Matcher::fill_mask(TokenBitset& mask) {
  const Vocabulary& v = grammar_->vocabulary();
  if (mask.size() != v.size()) mask = TokenBitset(v.size());
  mask.clear();
  const Entry& e = history_.back();
  if (e.ended) return;
  for (const Stack& s : e.stacks) add_stack(s, mask);
  if (e.strip_pending) add_stripped(e.stacks, mask);
  if (can_end())
    for (int32_t id : v.end_tokens()) mask.set(static_cast<size_t>(id));
}

bool matches(const CompiledGrammar& g, std::string_view text) {
  Frames frames;
  Walker w(g.automaton(), frames);
  State s{w.settle(Stack{g.start_node(), kNoFrame})};
  if (!w.advance(s, text.data(), text.size())) return false;
  Expanded e;
  w.expand(s, e);
  return e.ends;
}

}  // namespace exspec::grammar
