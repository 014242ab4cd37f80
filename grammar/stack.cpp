#include "grammar/stack.h"

#include <algorithm>

namespace exspec::grammar {

uint32_t Frames::intern(uint32_t node, uint32_t parent) {
  const uint64_t key = (static_cast<uint64_t>(node) << 32) | parent;
  auto [it, fresh] = index_.emplace(key, static_cast<uint32_t>(items_.size()));
  if (fresh) items_.push_back(Stack{node, parent});
  return it->second;
}

void Walker::expand(const State& state, Expanded& out) {
  out.ready.clear();
  out.ends = false;
  work_.assign(state.begin(), state.end());
  seen_.clear();
  while (!work_.empty()) {
    const Stack s = work_.back();
    work_.pop_back();
    if (std::find(seen_.begin(), seen_.end(), s) != seen_.end()) continue;
    seen_.push_back(s);
    const Automaton::Node& n = a_.nodes[s.node];
    if (n.flags & Automaton::kBytes) out.ready.push_back(s);
    for (uint32_t r = n.refs_begin; r < n.refs_end; ++r) {
      const Automaton::RefEdge& e = a_.refs[r];
      // A reference whose return would only end the rule returns to where the rule would: the
      // stack does not grow with right recursion.
      const uint32_t below = a_.has(e.to, Automaton::kExit) ? s.parent : frames_.intern(e.to, s.parent);
      work_.push_back(Stack{a_.rules[e.rule].start, below});
    }
    if (n.flags & Automaton::kFinal) {
      if (s.parent == kNoFrame) out.ends = true;
      else work_.push_back(frames_.at(s.parent));
    }
  }
}

void Walker::step(const Expanded& from, uint8_t byte, State& out) const {
  out.clear();
  for (const Stack& s : from.ready) {
    const uint32_t t = a_.next(s.node, byte);
    if (t != kDead) out.push_back(settle(Stack{t, s.parent}));
  }
  if (out.size() > 1) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
}

bool Walker::advance(State& state, const char* bytes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    expand(state, scratch_);
    step(scratch_, static_cast<uint8_t>(bytes[i]), next_);
    if (next_.empty()) return false;
    state.swap(next_);
  }
  return true;
}

}  // namespace exspec::grammar
