#include "grammar/token_sets.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_map>

#include "grammar/refine.h"
#include "grammar/trie_walk.h"

namespace exspec::grammar {
namespace {

// representative[n]: a node of n's rule that every byte string of up to `depth` bytes treats
// like n (Moore's refinement stopped after `depth` rounds). Rules that reference others keep
// their nodes apart (the DFA is minimal already, and a reference may consume no byte).
std::vector<uint32_t> representatives(const Automaton& a, size_t depth) {
  std::vector<uint32_t> rep(a.nodes.size());
  for (uint32_t n = 0; n < a.nodes.size(); ++n) rep[n] = n;
  for (const Automaton::RuleInfo& r : a.rules) {
    if (r.start == kDead || r.num_nodes < 2) continue;
    bool refs = false;
    for (uint32_t n = r.first_node; n < r.first_node + r.num_nodes; ++n) refs |= a.has(n, Automaton::kRefs);
    if (refs) continue;
    const uint32_t classes = a.nodes[r.first_node + 1].trans - a.nodes[r.first_node].trans;
    std::vector<uint32_t> initial(r.num_nodes);
    for (uint32_t i = 0; i < r.num_nodes; ++i) initial[i] = a.has(r.first_node + i, Automaton::kFinal) ? 1 : 0;
    const std::vector<uint32_t> cls = refine_partition(std::move(initial), [&](uint32_t i, const std::vector<uint32_t>& c, std::vector<uint32_t>& key) {
      const Automaton::Node& n = a.nodes[r.first_node + i];
      key.push_back(c[i]);
      for (uint32_t k = 0; k < classes; ++k) {
        const uint32_t t = a.trans[n.trans + k];
        key.push_back(t == kDead ? kDead : c[t - r.first_node]);
      }
    }, depth + 1);
    std::vector<uint32_t> first(r.num_nodes, kDead);
    for (uint32_t i = 0; i < r.num_nodes; ++i) {
      if (first[cls[i]] == kDead) first[cls[i]] = r.first_node + i;
      rep[r.first_node + i] = first[cls[i]];
    }
  }
  return rep;
}

NodeTokens node_tokens(const Automaton& a, const Vocabulary& v, uint32_t node, Frames& frames) {
  frames.clear();
  TrieWalk walk(a, frames);
  const Trie& t = v.trie();
  TokenBitset accepted(v.size());
  std::vector<std::pair<uint32_t, uint32_t>> tails;  // (token, bytes inside the rule)
  NodeTokens out;
  walk.run(
      t, 0, State{Stack{node, kNoFrame}},
      [&](uint32_t i, uint32_t) {
        for (uint32_t k = t.tok_begin[i]; k < t.tok_begin[i + 1]; ++k) accepted.set(t.toks[k]);
      },
      [&](uint32_t i, uint32_t d) {
        if (d == 0) {
          out.from_start = true;
          return;
        }
        for (uint32_t j = i + 1; j < t.end[i]; ++j)
          for (uint32_t k = t.tok_begin[j]; k < t.tok_begin[j + 1]; ++k) tails.emplace_back(t.toks[k], d);
      });
  std::vector<std::pair<std::string, uint32_t>> items;
  for (const auto& [tok, d] : tails)
    if (!accepted.test(tok)) items.emplace_back(v.bytes(static_cast<int32_t>(tok)).substr(d), tok);
  if (!items.empty()) out.continuing = Trie::build(std::move(items));
  out.accepted = TokenList(accepted);
  return out;
}

}  // namespace

TokenList::TokenList(const TokenBitset& set) : count_(set.count()) {
  if (count_ * 32 > set.size()) {  // a bitset is smaller
    bits_.assign(set.words(), set.words() + set.num_words());
    return;
  }
  ids_.reserve(count_);
  for (size_t w = 0; w < set.num_words(); ++w)
    for (uint64_t bits = set.words()[w]; bits; bits &= bits - 1)
      ids_.push_back(static_cast<uint32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
}

void TokenList::or_into(TokenBitset& mask) const {
  if (!bits_.empty()) {
    uint64_t* w = mask.words();
    for (size_t i = 0; i < bits_.size(); ++i) w[i] |= bits_[i];
  } else {
    for (uint32_t i : ids_) mask.set(i);
  }
}

void TokenSets::build(const Automaton& a, const Vocabulary& v, double eager_seconds) {
  a_ = &a;
  v_ = &v;
  const std::vector<uint32_t> rep = representatives(a, v.trie().max_depth);
  of_node_.assign(a.nodes.size(), 0);
  rep_.clear();
  for (uint32_t n = 0; n < a.nodes.size(); ++n) {
    if (rep[n] != n) {
      of_node_[n] = of_node_[rep[n]];
      continue;
    }
    of_node_[n] = static_cast<uint32_t>(rep_.size());
    rep_.push_back(n);
  }
  sets_ = std::make_unique<std::atomic<const NodeTokens*>[]>(rep_.size());
  for (size_t i = 0; i < rep_.size(); ++i) sets_[i].store(nullptr);
  // Eagerly, rule by rule, smallest rules first, until the budget is spent: the rest (a long
  // counted repetition's entries) is computed on first use.
  std::vector<std::vector<uint32_t>> by_rule(a.rules.size());
  for (uint32_t e = 0; e < rep_.size(); ++e) by_rule[a.nodes[rep_[e]].rule].push_back(e);
  std::sort(by_rule.begin(), by_rule.end(), [](const auto& x, const auto& y) { return x.size() < y.size(); });
  const auto start = std::chrono::steady_clock::now();
  for (const std::vector<uint32_t>& entries : by_rule)
    for (uint32_t e : entries) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > eager_seconds) return;
      compute(e);
    }
}

const NodeTokens& TokenSets::compute(uint32_t entry) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (const NodeTokens* p = sets_[entry].load(std::memory_order_relaxed)) return *p;
  owned_.push_back(std::make_unique<NodeTokens>(node_tokens(*a_, *v_, rep_[entry], frames_)));
  sets_[entry].store(owned_.back().get(), std::memory_order_release);
  return *owned_.back();
}

size_t TokenSets::computed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return owned_.size();
}

size_t TokenSets::memory_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = of_node_.size() * 4 + rep_.size() * (4 + sizeof(void*));
  for (const auto& s : owned_) n += s->memory_bytes();
  return n;
}

}  // namespace exspec::grammar
