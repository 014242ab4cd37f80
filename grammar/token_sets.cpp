#include "grammar/token_sets.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "grammar/trie_walk.h"

namespace exspec::grammar {
namespace {

struct KeyHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    size_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return h;
  }
};

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
    const uint32_t classes = static_cast<uint32_t>(a.nodes[r.first_node + 1].trans - a.nodes[r.first_node].trans);
    std::vector<uint32_t> cls(r.num_nodes), next(r.num_nodes);
    for (uint32_t i = 0; i < r.num_nodes; ++i) cls[i] = a.has(r.first_node + i, Automaton::kFinal) ? 1 : 0;
    size_t count = 0;
    std::vector<uint32_t> key;
    for (size_t round = 0; round <= depth; ++round) {
      std::unordered_map<std::vector<uint32_t>, uint32_t, KeyHash> ids;
      for (uint32_t i = 0; i < r.num_nodes; ++i) {
        const Automaton::Node& n = a.nodes[r.first_node + i];
        key.assign(1, cls[i]);
        for (uint32_t c = 0; c < classes; ++c) {
          const uint32_t t = a.trans[n.trans + c];
          key.push_back(t == kDead ? kDead : cls[t - r.first_node]);
        }
        next[i] = ids.emplace(key, static_cast<uint32_t>(ids.size())).first->second;
      }
      cls.swap(next);
      if (ids.size() == count) break;
      count = ids.size();
    }
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
  std::vector<uint32_t> accepted;
  std::vector<std::pair<uint32_t, uint32_t>> tails;  // (token, bytes inside the rule)
  NodeTokens out;
  walk.run(
      t, 0, State{Stack{node, kNoFrame}},
      [&](uint32_t i, uint32_t) {
        for (uint32_t k = t.tok_begin[i]; k < t.tok_begin[i + 1]; ++k) accepted.push_back(t.toks[k]);
      },
      [&](uint32_t i, uint32_t d) {
        if (d == 0) {
          out.from_start = true;
          return;
        }
        for (uint32_t j = i + 1; j < t.end[i]; ++j)
          for (uint32_t k = t.tok_begin[j]; k < t.tok_begin[j + 1]; ++k) tails.emplace_back(t.toks[k], d);
      });
  std::sort(accepted.begin(), accepted.end());
  accepted.erase(std::unique(accepted.begin(), accepted.end()), accepted.end());
  std::vector<std::pair<std::string, uint32_t>> items;
  for (const auto& [tok, d] : tails)
    if (!std::binary_search(accepted.begin(), accepted.end(), tok))
      items.emplace_back(v.bytes(static_cast<int32_t>(tok)).substr(d), tok);
  if (!items.empty()) out.continuing = Trie::build(std::move(items));
  out.accepted = TokenList(std::move(accepted), v.size());
  return out;
}

}  // namespace

TokenList::TokenList(std::vector<uint32_t> ids, size_t vocab_size) : count_(ids.size()) {
  if (ids.size() * 32 > vocab_size) {  // a bitset is smaller
    bits_.assign((vocab_size + 63) / 64, 0);
    for (uint32_t i : ids) bits_[i >> 6] |= uint64_t{1} << (i & 63);
  } else {
    ids_ = std::move(ids);
  }
}

void TokenList::or_into(TokenBitset& mask) const {
  if (!bits_.empty()) {
    uint64_t* w = mask.words();
    for (size_t i = 0; i < bits_.size(); ++i) w[i] |= bits_[i];
  } else {
    for (uint32_t i : ids_) mask.set(i);
  }
}

size_t TokenSets::memory_bytes() const {
  size_t n = of_node.size() * 4;
  for (const NodeTokens& s : sets) n += s.memory_bytes();
  return n;
}

TokenSets compute_token_sets(const Automaton& a, const Vocabulary& v) {
  const std::vector<uint32_t> rep = representatives(a, v.trie().max_depth);
  TokenSets out;
  out.of_node.resize(a.nodes.size());
  Frames frames;
  for (uint32_t n = 0; n < a.nodes.size(); ++n) {
    if (rep[n] != n) {
      out.of_node[n] = out.of_node[rep[n]];
      continue;
    }
    out.of_node[n] = static_cast<uint32_t>(out.sets.size());
    out.sets.push_back(node_tokens(a, v, n, frames));
  }
  return out;
}

}  // namespace exspec::grammar
