#include "grammar/token_sets.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_map>

#include "grammar/budget.h"
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

enum class Which { All, Short, Long };

// The node's sets over the tokens `which` names: a walk of the whole trie (All, Short) or of the
// long tokens' trie (Long).
NodeTokens node_tokens(const Automaton& a, const Vocabulary& v, uint32_t node, Which which, Frames& frames) {
  frames.clear();
  TrieWalk walk(a, frames);
  const Trie& t = which == Which::Long ? v.long_trie() : v.trie();
  const bool skip_long = which == Which::Short;
  std::vector<uint32_t> ids;  // accepted, in trie order
  std::vector<std::pair<uint32_t, uint32_t>> tails;  // (token, bytes inside the rule)
  NodeTokens out;
  walk.run(
      t, 0, State{Stack{node, kNoFrame}},
      [&](uint32_t i, uint32_t) {
        for (uint32_t k = t.tok_begin[i]; k < t.tok_begin[i + 1]; ++k)
          if (!skip_long || !v.is_long(static_cast<int32_t>(t.toks[k]))) ids.push_back(t.toks[k]);
      },
      [&](uint32_t i, uint32_t d) {
        if (d == 0) {
          out.from_start = true;
          return;
        }
        for (uint32_t j = i + 1; j < t.end[i]; ++j)
          for (uint32_t k = t.tok_begin[j]; k < t.tok_begin[j + 1]; ++k)
            if (!skip_long || !v.is_long(static_cast<int32_t>(t.toks[k]))) tails.emplace_back(t.toks[k], d);
      });
  out.accepted = TokenList(std::move(ids), v.size());
  std::vector<std::pair<std::string, uint32_t>> items;
  for (const auto& [tok, d] : tails)
    if (!out.accepted.contains(tok)) items.emplace_back(v.bytes(static_cast<int32_t>(tok)).substr(d), tok);
  if (!items.empty()) out.continuing = Trie::build(std::move(items));
  return out;
}

}  // namespace

TokenList::TokenList(std::vector<uint32_t> ids, size_t vocab_size) : count_(ids.size()) {
  if (count_ * 32 > vocab_size) {  // a bitset is smaller
    bits_.assign((vocab_size + 63) / 64, 0);
    for (uint32_t i : ids) bits_[i >> 6] |= uint64_t{1} << (i & 63);
    return;
  }
  std::sort(ids.begin(), ids.end());
  ids_ = std::move(ids);
}

bool TokenList::contains(uint32_t id) const {
  if (!bits_.empty()) return (bits_[id >> 6] >> (id & 63)) & 1;
  return std::binary_search(ids_.begin(), ids_.end(), id);
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
  const std::vector<uint32_t> rep = representatives(a, Vocabulary::kShortBytes);
  std::vector<uint32_t> members(a.nodes.size(), 0);
  for (uint32_t n = 0; n < a.nodes.size(); ++n) ++members[rep[n]];
  of_node_.assign(a.nodes.size(), kDead);
  rep_.clear();
  for (uint32_t n = 0; n < a.nodes.size(); ++n) {
    if (members[rep[n]] < 2) continue;
    if (rep[n] == n) {
      of_node_[n] = static_cast<uint32_t>(rep_.size());
      rep_.push_back(n);
    } else {
      of_node_[n] = of_node_[rep[n]];
    }
  }
  shared_.assign(rep_.size(), nullptr);
  sets_ = std::make_unique<std::atomic<const NodeTokens*>[]>(a.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) sets_[i].store(nullptr);
  // Eagerly, rule by rule, smallest rules first, until the budget is spent: the rest (a long
  // counted repetition's entries) is computed on first use.
  std::vector<std::vector<uint32_t>> by_rule(a.rules.size());
  for (uint32_t n = 0; n < a.nodes.size(); ++n) by_rule[a.nodes[n].rule].push_back(n);
  std::sort(by_rule.begin(), by_rule.end(), [](const auto& x, const auto& y) { return x.size() < y.size(); });
  const auto start = std::chrono::steady_clock::now();
  for (const std::vector<uint32_t>& entries : by_rule)
    for (uint32_t e : entries) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > eager_seconds) return;
      check_budget();
      compute(e);
    }
}

const NodeTokens& TokenSets::shared(uint32_t cls) const {
  if (!shared_[cls]) {
    owned_.push_back(std::make_unique<NodeTokens>(node_tokens(*a_, *v_, rep_[cls], Which::Short, frames_)));
    shared_[cls] = owned_.back().get();
    ++walks_;
  }
  return *shared_[cls];
}

const NodeTokens& TokenSets::compute(uint32_t node) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (const NodeTokens* p = sets_[node].load(std::memory_order_relaxed)) return *p;
  if (of_node_[node] == kDead) {
    owned_.push_back(std::make_unique<NodeTokens>(node_tokens(*a_, *v_, node, Which::All, frames_)));
    ++walks_;
  } else {
    const NodeTokens& base = shared(of_node_[node]);
    owned_.push_back(std::make_unique<NodeTokens>(node_tokens(*a_, *v_, node, Which::Long, frames_)));
    owned_.back()->shared = &base;
    owned_.back()->from_start = false;  // the class's shared sets walk the whole vocabulary for that
  }
  sets_[node].store(owned_.back().get(), std::memory_order_release);
  return *owned_.back();
}

size_t TokenSets::computed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return owned_.size();
}

size_t TokenSets::memory_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = of_node_.size() * (4 + sizeof(void*)) + rep_.size() * (4 + sizeof(void*));
  for (const auto& s : owned_) n += s->memory_bytes();
  return n;
}

}  // namespace exspec::grammar
