#include "model/constrained.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>

#include "grammar/matcher.h"

namespace exspec {

GrammarStepStats& grammar_step_stats() {
  static GrammarStepStats s;
  return s;
}

void mask_column(grammar::Matcher& m, grammar::TokenBitset& scratch, double* logits, int64_t vocab) {
  const auto t0 = std::chrono::steady_clock::now();
  m.fill_mask(scratch);
  const int64_t n = std::min<int64_t>(vocab, static_cast<int64_t>(scratch.size()));
  grammar::apply_mask(scratch, logits, static_cast<size_t>(n));
  std::fill(logits + n, logits + vocab, -std::numeric_limits<double>::infinity());
  GrammarStepStats& s = grammar_step_stats();
  s.masks.fetch_add(1, std::memory_order_relaxed);
  s.mask_ns.fetch_add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::steady_clock::now() - t0)
                                                .count()),
                      std::memory_order_relaxed);
}

int64_t mask_verified_row(grammar::Matcher& m, double* logits, int64_t vocab, const int64_t* drafts, int64_t K) {
  grammar::TokenBitset scratch;
  const grammar::CompiledGrammar& g = m.grammar();
  int64_t v = 0;
  for (;; ++v) {
    mask_column(m, scratch, logits + v * vocab, vocab);
    if (v == K) break;
    const int64_t d = drafts[v];
    // A draft the column's mask refuses can never be accepted; an end token is left to the target
    // (after it the next column's mask would be empty).
    if (d < 0 || static_cast<size_t>(d) >= scratch.size() || !scratch.test(static_cast<size_t>(d)) || grammar_end_token(g, d) ||
        !m.accept(static_cast<int32_t>(d)))
      break;
  }
  grammar_step_stats().drafts_cut.fetch_add(static_cast<uint64_t>(K - v), std::memory_order_relaxed);
  return v;
}

void settle_matcher(grammar::Matcher& m, int64_t walked, int64_t accepted, int64_t bonus) {
  if (accepted > walked) throw std::logic_error("settle_matcher: accepted past the grammar's walk");
  m.rollback(static_cast<size_t>(walked - accepted));
  if (!m.accept(static_cast<int32_t>(bonus)))
    throw std::logic_error("settle_matcher: token " + std::to_string(bonus) + " is not allowed by the grammar");
}

int64_t masked_argmax(grammar::Matcher& m, grammar::TokenBitset& scratch, double* logits, int64_t vocab) {
  if (m.ended()) return -1;
  mask_column(m, scratch, logits, vocab);
  const int64_t best = std::max_element(logits, logits + vocab) - logits;
  if (logits[best] == -std::numeric_limits<double>::infinity() || grammar_end_token(m.grammar(), best) ||
      !m.accept(static_cast<int32_t>(best)))
    return -1;
  return best;
}

bool grammar_end_token(const grammar::CompiledGrammar& g, int64_t token) {
  const auto& ends = g.vocabulary().end_tokens();
  return std::find(ends.begin(), ends.end(), token) != ends.end();
}

std::vector<int64_t> forced_tokens(grammar::Matcher& m, int64_t k) {
  if (k <= 0 || m.ended()) return {};
  const grammar::Forced f = m.forced();
  const size_t n = std::min(f.tokens.size(), static_cast<size_t>(k));
  return std::vector<int64_t>(f.tokens.begin(), f.tokens.begin() + static_cast<std::ptrdiff_t>(n));
}

}  // namespace exspec
