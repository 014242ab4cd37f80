// The byte-level pushdown automaton of a grammar: every rule's body as a minimal DFA over byte
// classes and rule references, its states numbered globally ("nodes"). A matcher's state is a
// set of stacks of nodes (stack.h): the top node consumes bytes, the frames below are where each
// referenced rule returns to.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/budget.h"
#include "grammar/dfa.h"
#include "grammar/expr.h"

namespace exspec::grammar {

struct AutomatonLimits {
  // DFA states of one rule (NFA states: 4x): about a string of maxLength 500. Larger counted
  // repetitions are refused: their token sets would cost seconds to compile.
  size_t max_states_per_rule = kMaxRuleStates;
  size_t max_nodes = 500000;            // all rules together
};

struct Automaton {
  enum Flag : uint8_t {
    kFinal = 1,   // the rule may end here
    kBytes = 2,   // some byte moves on
    kRefs = 4,    // some rule is entered here
    kExit = 8,    // final and nothing else: the rule has ended (a stack pops it at once)
    kSimple = 16, // bytes only: not final, no references (the fast path of a walk)
  };
  struct Node {
    uint32_t trans = 0;       // offset of this node's row in `trans` (one entry per byte class)
    uint32_t rule = 0;
    uint32_t refs_begin = 0, refs_end = 0;  // its entries in `refs`
    uint16_t class_map = 0;   // index into class_maps
    uint8_t flags = 0;
  };
  struct RefEdge {
    uint32_t rule, to;  // enter `rule`; when it ends, continue at node `to`
  };
  struct RuleInfo {
    std::string name;
    uint32_t start = kDead;  // kDead: the rule matches nothing and was dropped
    uint32_t first_node = 0, num_nodes = 0;
  };

  std::vector<Node> nodes;
  std::vector<uint32_t> trans;
  std::vector<std::array<uint8_t, 256>> class_maps;
  std::vector<RefEdge> refs;
  std::vector<RuleInfo> rules;
  uint32_t root = 0;  // root rule

  uint32_t next(uint32_t node, uint8_t byte) const {
    const Node& n = nodes[node];
    return trans[n.trans + class_maps[n.class_map][byte]];
  }
  bool has(uint32_t node, Flag f) const { return (nodes[node].flags & f) != 0; }
  size_t memory_bytes() const;
};

// Throws GrammarError: an undefined or empty root, left recursion, a rule or grammar too large.
Automaton build_automaton(const Grammar& g, const AutomatonLimits& limits = {});

}  // namespace exspec::grammar
