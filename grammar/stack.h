// The parser state: a set of stacks over the automaton (automaton.h). A stack is its top node
// (where the next byte is read) and a frame id for the rest; frames (return node, frame below)
// are hash-consed in a Frames arena, so stacks are two integers, equal stacks compare equal, and
// states keep sharing their tails after any number of steps.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "grammar/automaton.h"

namespace exspec::grammar {

constexpr uint32_t kNoFrame = UINT32_MAX;

struct Stack {
  uint32_t node = 0;
  uint32_t parent = kNoFrame;  // the frame below; kNoFrame: this is the bottom
  bool operator==(const Stack& o) const { return node == o.node && parent == o.parent; }
  bool operator<(const Stack& o) const { return node != o.node ? node < o.node : parent < o.parent; }
};

using State = std::vector<Stack>;  // sorted, no duplicates

class Frames {
 public:
  uint32_t intern(uint32_t node, uint32_t parent);
  Stack at(uint32_t id) const { return items_[id]; }
  size_t size() const { return items_.size(); }
  void clear() {
    items_.clear();
    index_.clear();
  }

 private:
  std::vector<Stack> items_;
  std::unordered_map<uint64_t, uint32_t> index_;
};

// What a state can do next: the stacks whose top reads a byte, after entering referenced rules
// and leaving ended ones; `ends`: some stack can leave its bottom rule (at the grammar's root:
// the text may end here; in a node's local walk: the rule below continues).
struct Expanded {
  std::vector<Stack> ready;
  bool ends = false;
};

class Walker {
 public:
  Walker(const Automaton& a, Frames& frames) : a_(a), frames_(frames) {}
  void expand(const State& state, Expanded& out);
  void step(const Expanded& from, uint8_t byte, State& out) const;
  // Pops ended rules off the top (an exit node has nothing left but returning).
  Stack settle(Stack s) const {
    while (a_.has(s.node, Automaton::kExit) && s.parent != kNoFrame) s = frames_.at(s.parent);
    return s;
  }
  // Advances the state over bytes; false (state unspecified) when some byte is not allowed.
  bool advance(State& state, const char* bytes, size_t n);
  const Automaton& automaton() const { return a_; }
  Frames& frames() { return frames_; }

 private:
  const Automaton& a_;
  Frames& frames_;
  std::vector<Stack> work_, seen_;
  Expanded scratch_;
  State next_;
};

}  // namespace exspec::grammar
