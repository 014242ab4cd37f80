#include "grammar/compiled_grammar.h"

#include <chrono>

namespace exspec::grammar {

std::shared_ptr<const CompiledGrammar> CompiledGrammar::compile(const Grammar& g, std::shared_ptr<const Vocabulary> vocab,
                                                                const AutomatonLimits& limits) {
  const auto t0 = std::chrono::steady_clock::now();
  auto c = std::make_shared<CompiledGrammar>();
  c->automaton_ = build_automaton(g, limits);
  c->vocab_ = std::move(vocab);
  c->sets_.build(c->automaton_, *c->vocab_);
  c->seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

}  // namespace exspec::grammar
