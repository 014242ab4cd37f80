// A sequence in the in-place stores (model/kv_store.h), as the Scheduler plans it and a step
// carries it: its slot (the same index in the target's and the draft's store), its tokens, and
// how many positions of its slot each store holds. The two counters are a copy of the
// sequence's own (Sequence::stored, actors/scheduler/sequence_pool.h), as vLLM hands
// num_computed_tokens to its model runner: the in-place functions (model/inplace.h) hand them
// to each forward (the stores keep no lengths) and advance them by what they stored, a step's
// commit sets them, and the job's outcome brings them back to the sequence.
//
// Invariant (the paper modes' too, docs/design.md "How a step works"): tokens are the prompt,
// then the generated ones; the last, `pending`, is in neither store. The target's slot holds
// every token before pending once the prompt is stored (target_len <= tokens - 1, less while
// storing). The draft's holds a prefix of them, shorter by its lag: a step with K = 0 feeds the
// draft nothing (pending joins the lag), and when all K drafts were accepted d_K was never fed
// to it. The next drafting step feeds the lag first, in the same forward.
#pragma once
#include <cstdint>
#include <vector>

namespace exspec {

// What each model's store holds of a sequence: positions, from its first token.
struct Stored {
  int64_t target = 0, draft = 0;
};

struct SlotRow {
  int64_t slot = -1;
  std::vector<int64_t> tokens;  // prompt, then generated; the last is pending
  int64_t target_len = 0, draft_len = 0;  // positions of the slot each store holds
  // Where those positions live in each store (actors/scheduler/block_pool.h); empty: the slot's own row.
  std::vector<int64_t> target_blocks, draft_blocks;

  Stored stored() const { return {target_len, draft_len}; }
  int64_t before_pending() const { return static_cast<int64_t>(tokens.size()) - 1; }
  // Prompt tokens the target has yet to store (0: the sequence can decode).
  int64_t prefill_remaining() const { return before_pending() - target_len; }
  // Tokens the draft must catch up before it can draft for this sequence.
  int64_t draft_lag() const { return before_pending() - draft_len; }
};

// The draft's lag after a step that verified k drafts of which a were accepted: with k = 0 the
// draft was fed nothing (pending joins its lag); otherwise it holds pending and the first
// min(a, k - 1, agree) drafts, which leaves d_k unfed when every draft was accepted. agree: how
// many leading verified drafts are the ones the draft model fed (all k unless a proposal took
// their place, actors/scheduler/proposer.h). The one statement of this rule.
inline int64_t lag_after_step(int64_t lag, int64_t k, int64_t a, int64_t agree) {
  if (k == 0) return lag + 1;
  const int64_t kept = a < k - 1 ? a : k - 1;
  return a - (agree < kept ? agree : kept);
}

}  // namespace exspec
