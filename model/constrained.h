// Structured output in the step (issue 46): one grammar::Matcher per constrained sequence is the
// single source of truth. It holds exactly the sequence's generated tokens between steps (pending
// included). At verification, column j of a row's target logits over [pending, d_1..d_K] is
// masked by the matcher's state after pending, d_1..d_j, before the acceptance rule reads it
// (argmax or sample_token: logit bias, penalties and temperature apply after the mask, as plain
// decoding under the grammar does), so a verified position sees the mask plain decoding sees.
// The walk over the drafts stops at the first draft the grammar refuses (or an end token: the end
// comes only as the target's own token, never accepted as a draft), and acceptance is capped
// there. After acceptance the matcher rolls back what it walked past the accepted drafts and
// takes the bonus token. Plain C++ over rows of float64 logits (torch-free).
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

namespace exspec {

namespace grammar {
class CompiledGrammar;
class Matcher;
class TokenBitset;
}  // namespace grammar

// Process-wide counters of the grammar's work in the step (/metrics).
struct GrammarStepStats {
  std::atomic<uint64_t> masks{0};           // masks computed (one per verified or plain-decoded column)
  std::atomic<uint64_t> mask_ns{0};         // their time, fill and application, in nanoseconds
  std::atomic<uint64_t> drafts_cut{0};      // draft tokens the grammar refused (never verified as drafts)
  std::atomic<uint64_t> forced_proposed{0};  // tokens the grammar forced, proposed as free drafts
};
GrammarStepStats& grammar_step_stats();

// Masks one column of logits (vocab entries) in place by the matcher's current state: tokens the
// grammar does not allow, and ids beyond its vocabulary (padded model vocabularies), become -inf.
void mask_column(grammar::Matcher& m, grammar::TokenBitset& scratch, double* logits, int64_t vocab);

// Masks columns 0..v of a verification row (K + 1 columns of `vocab` logits, row-major) and
// returns v: the number of leading drafts the grammar allows (an end token counts as refused).
// Leaves the matcher after d_1..d_v. Columns past v are not masked and must not be read.
int64_t mask_verified_row(grammar::Matcher& m, double* logits, int64_t vocab, const int64_t* drafts, int64_t K);

// After acceptance of a row walked to v: a accepted drafts (a <= v), then the bonus token chosen
// from a masked column. The matcher then holds exactly the committed tokens. Throws
// std::logic_error when the bonus is not allowed (a column read unmasked).
void settle_matcher(grammar::Matcher& m, int64_t walked, int64_t accepted, int64_t bonus);

// The draft model's proposal under the grammar: the first maximum of the masked logits (one
// column of `vocab`, masked in place), which the matcher then takes; -1 when the grammar allows
// nothing more here (the rest of the row's drafts are cut at verification).
int64_t masked_argmax(grammar::Matcher& m, grammar::TokenBitset& scratch, double* logits, int64_t vocab);

// Whether `token` is one of the grammar's end tokens (the sequence then ends: after one nothing
// is allowed).
bool grammar_end_token(const grammar::CompiledGrammar& g, int64_t token);

// Up to k tokens the grammar forces from the matcher's state (its only continuation, tokenized as
// the tokenizer writes it), proposed as drafts that no model computes (actors/scheduler/proposer.h).
std::vector<int64_t> forced_tokens(grammar::Matcher& m, int64_t k);

}  // namespace exspec
