// A grammar compiled for one vocabulary: its pushdown automaton and each node's token sets.
// Immutable once built, shared by every Matcher of it (and across threads).
#pragma once
#include <memory>

#include "grammar/automaton.h"
#include "grammar/expr.h"
#include "grammar/token_sets.h"
#include "grammar/vocabulary.h"

namespace exspec::grammar {

class CompiledGrammar {
 public:
  // Throws GrammarError (an empty language, left recursion, too large).
  static std::shared_ptr<const CompiledGrammar> compile(const Grammar& g, std::shared_ptr<const Vocabulary> vocab,
                                                        const AutomatonLimits& limits = {});

  const Automaton& automaton() const { return automaton_; }
  const Vocabulary& vocabulary() const { return *vocab_; }
  const std::shared_ptr<const Vocabulary>& vocabulary_ptr() const { return vocab_; }
  const TokenSets& token_sets() const { return sets_; }
  // The initial state (the root rule's start).
  uint32_t start_node() const { return automaton_.rules[automaton_.root].start; }
  // Bytes held by this grammar (the vocabulary, shared, not counted).
  size_t memory_bytes() const { return automaton_.memory_bytes() + sets_.memory_bytes(); }
  double compile_seconds() const { return seconds_; }

 private:
  Automaton automaton_;
  std::shared_ptr<const Vocabulary> vocab_;
  TokenSets sets_;
  double seconds_ = 0;
};

}  // namespace exspec::grammar
