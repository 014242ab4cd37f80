// Where a step's drafts come from (issue 31). The draft model is one proposer; two need no
// model at all: prompt lookup (the sequence's own text: what followed the last time its latest
// n tokens appeared) and the request's `prediction` (OpenAI's Predicted Outputs: the text the
// client expects). Every proposal is verified by the same acceptance rule as the model's drafts
// (model/accept.h), so the output stays that of plain decoding whatever was
// proposed: a proposer can only change how many tokens a step commits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace exspec {

// Grammar: the tokens a constrained sequence's grammar forces (its only continuation: a strict
// schema's keys, separators, closing brackets; model/constrained.h), ahead of any other proposal.
enum class Proposer { Model, Lookup, Prediction, Grammar };
constexpr int kProposers = 4;
const char* proposer_name(Proposer p);  // "model" | "ngram" | "prediction" | "grammar"

// Where one committed token came from: an accepted proposal (its proposer's; a draft model's
// filler past the proposal counts as Model), or the target's own choice (the bonus token after
// accepted drafts, the correction of a rejected one, or a plain step's token). What the chat page
// at GET / shades (docs/serving.md, "stream_options.include_origin").
enum class TokenOrigin : uint8_t { Target, Model, Lookup, Prediction, Grammar };
inline TokenOrigin origin_of(Proposer p) { return static_cast<TokenOrigin>(static_cast<int>(p) + 1); }
// "target" | "draft" | "ngram" | "prediction" | "grammar"
inline const char* origin_name(TokenOrigin o) {
  switch (o) {
    case TokenOrigin::Model: return "draft";
    case TokenOrigin::Lookup: return "ngram";
    case TokenOrigin::Prediction: return "prediction";
    case TokenOrigin::Grammar: return "grammar";
    default: return "target";
  }
}

// The n-gram sizes a lookup tries, longest first (a longer match predicts better).
struct LookupSettings {
  int64_t min_n = 1, max_n = 4;
};
// Prompt lookup starts at bigrams: a single token recurs by chance in any text (in 100 tokens
// drawn from 300, a fifth of the positions have an earlier equal one), so unigram proposals on
// text that does not repeat are almost all rejected, and each costs a longer verification.
constexpr LookupSettings kPromptLookup{2, 4};

// Prompt lookup over `tokens` (prompt, then generated; the last is pending): for n from max_n
// down to min_n, the most recent earlier occurrence of the last n tokens, and up to k tokens
// that followed it. Empty when nothing matches.
std::vector<int64_t> propose_lookup(const std::vector<int64_t>& tokens, int64_t k, LookupSettings s = kPromptLookup);

// Predicted Outputs: up to k tokens of `prediction` that should follow `generated` (the tokens
// generated so far, pending last). Before the first token, its start; after, the prediction
// re-aligned by lookup: where the last n generated tokens occur in it (n longest first), the
// occurrence nearest to where the text would be had nothing been rejected. Empty when the
// generated text has left the prediction. (A single token re-aligns here: the prediction is the
// client's text for this answer, not a chance recurrence.)
std::vector<int64_t> propose_prediction(const std::vector<int64_t>& prediction, const std::vector<int64_t>& generated,
                                        int64_t k, LookupSettings s = {});

}  // namespace exspec
