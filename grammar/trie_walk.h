// A state walked over a trie: every trie node whose bytes the state accepts is reported, dead
// prefixes skip their whole subtree. This one loop computes a node's token sets at compile time
// (token_sets.cpp) and checks the tokens that depend on the stack at mask time (matcher.cpp).
// Buffers are kept between walks: a walk allocates nothing once warm.
#pragma once
#include <cstdint>
#include <vector>

#include "grammar/stack.h"
#include "grammar/trie.h"

namespace exspec::grammar {

class TrieWalk {
 public:
  TrieWalk(const Automaton& a, Frames& frames) : a_(a), walker_(a, frames) {}
  Walker& walker() { return walker_; }

  // Walks the subtree of trie node `root` from `init`. on_alive(i, d): node i (d bytes below
  // root) is accepted. on_end(i, d): from node i (d bytes below root) the bottom rule can end, so
  // the tokens further down continue in whatever lies below it.
  template <class Alive, class End>
  void run(const Trie& t, uint32_t root, const State& init, Alive&& on_alive, End&& on_end) {
    const uint32_t base = t.depth[root];
    const size_t levels = static_cast<size_t>(t.max_depth - base) + 2;
    if (states_.size() < levels) {
      states_.resize(levels);
      expanded_.resize(levels);
      expanded_ok_.resize(levels);
      node_at_.resize(levels);
    }
    states_[0] = init;
    expanded_ok_[0] = 0;
    node_at_[0] = root;
    for (uint32_t i = root + 1; i < t.end[root];) {
      const uint32_t d = t.depth[i] - base;
      const State& prev = states_[d - 1];
      State& cur = states_[d];
      if (prev.size() == 1 && a_.has(prev[0].node, Automaton::kSimple)) {  // the common case
        const uint32_t n = a_.next(prev[0].node, t.byte[i]);
        if (n == kDead) {
          i = t.end[i];
          continue;
        }
        cur.resize(1);
        cur[0] = walker_.settle(Stack{n, prev[0].parent});
      } else {
        if (!expanded_ok_[d - 1]) {
          walker_.expand(prev, expanded_[d - 1]);
          expanded_ok_[d - 1] = 1;
          if (expanded_[d - 1].ends) on_end(node_at_[d - 1], d - 1);
        }
        walker_.step(expanded_[d - 1], t.byte[i], cur);
        if (cur.empty()) {
          i = t.end[i];
          continue;
        }
      }
      expanded_ok_[d] = 0;
      node_at_[d] = i;
      on_alive(i, d);
      ++i;
    }
  }

 private:
  const Automaton& a_;
  Walker walker_;
  std::vector<State> states_;
  std::vector<Expanded> expanded_;
  std::vector<char> expanded_ok_;
  std::vector<uint32_t> node_at_;
};

}  // namespace exspec::grammar
