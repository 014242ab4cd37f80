// The tensor state of a batch in speculative decoding, and the realignment primitives of the
// paper (Algorithm 2, Fig. 3): unpad-append-repad of input ids, attention mask, position ids
// and both models' KV caches.
//
// Invariant: each model's cache covers every token of a sequence except the last
// one, the pending token, which is fed at the next forward. The draft may lag further behind
// (`lag_tokens`, whose count is what every other type calls `draft_lag`): when all K drafts
// were accepted, d_K was never fed to the draft, and a step with K = 0 (a plain target step)
// feeds nothing to the draft. The next drafting step feeds the lag first, in the same forward.
// The draft is prefilled the same way, lazily: a new sequence's draft cache is empty and its
// whole prompt (but the pending token) is the lag, so a sequence that never drafts (adaptive K
// choosing plain steps) costs the draft model nothing.
// Position ids are content positions derived from the per-row token count, never from padding.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "model/oracle/kv_cache.h"

namespace exspec {

class Decoder;

// One model's cache over a batch. mask [B, S] int64 marks content (1) vs padding or rejected
// positions (0); S == cache.length(). Rows may hold "holes" (rejected drafts) until realigned.
struct CacheState {
  KVCache cache;
  at::Tensor mask;
  int64_t batch() const { return mask.defined() ? mask.size(0) : 0; }
};

// One sequence's cache of one model: content only, [1, kv_heads, count, head_dim] per layer.
// Views into a batch's buffers are fine: nobody appends to a sequence cache in place.
using SeqCache = KVCache;

struct SpecBatch;

// The per-sequence tensor state that lives in the SequencePool between steps.
struct SeqTensors {
  SeqCache target, draft;  // empty while the row's caches are still only in `parked` (below)
  int64_t length = 0;        // tokens so far (prompt + generated)
  int64_t pending = -1;      // the last token, in neither cache
  std::vector<int64_t> lag_tokens;  // the tokens before `pending` the draft cache lacks, in order
  bool has_draft = false;          // speculative modes: the draft follows this sequence
  // The batch this state was cut from (row `parked_row`): when the next batch is exactly those
  // rows in that order, it is reused as is, with no copy (see assemble()).
  std::shared_ptr<const SpecBatch> parked;
  int64_t parked_row = -1;
  // split_rows() cuts a row's caches out of `parked` only when a batch other than `parked` needs
  // them (assemble): a plain step that goes on with the same rows then costs no per-row,
  // per-layer views (which a fixed nonspec batch does not pay either). >= 0: the row's content
  // positions in parked's target / draft cache, not cut yet.
  int64_t parked_target = -1, parked_draft = -1;
};

struct SpecBatch {
  CacheState target, draft;  // draft is empty in nonspec mode
  at::Tensor pending;        // [B] int64
  at::Tensor lag_tokens;     // [B, L] int64 lag_tokens rows, right-aligned, -1 = none (L may be 0)
  bool has_draft = false;    // speculative: the draft cache may still be empty (never drafted)
  at::Tensor lengths;        // [B] int64 tokens per row; the target cache holds lengths - 1 content
  int64_t batch() const { return pending.defined() ? pending.size(0) : 0; }
};

// A prefilled sequence's state: its target cache (prompt but the last token) and, with a
// draft, the prefix as the draft's lag (the draft is prefilled lazily, see above).
SeqTensors new_sequence(SeqCache target, const std::vector<int64_t>& prompt, bool has_draft);

// Runs one model over the left-padded prefixes (one forward) and returns each row's cache.
std::vector<SeqCache> prefill_caches(const Decoder& model, const std::vector<std::vector<int64_t>>& prefixes);

// Prefill: runs the target over prompt[0 .. n-2] of each prompt and returns one SeqTensors per
// prompt; the last prompt token becomes pending. With a draft, its prefill is deferred: the
// prefix becomes the draft's lag (caught up by the first drafting step).
std::vector<SeqTensors> prefill(const Decoder& target, const Decoder* draft,
                                const std::vector<std::vector<int64_t>>& prompts);

// Repad: builds a rectangular batch from sequences with minimal left padding. When all rows have
// the same count (a same-length group) the caches are simply stacked: no padding, all-ones mask.
// `reserve` is spare capacity for the coming appends. reuse: the sequences are exactly the rows
// of the batch they were cut from, in order (the scheduler knows; this checks it), and that
// batch is returned as is, with no copy.
SpecBatch assemble(const std::vector<const SeqTensors*>& seqs, int64_t reserve, bool reuse = false);
// Cuts a realigned batch into per-row states that remember it, for reuse by assemble(); their
// caches (views into its buffers) are cut when another batch first needs them.
std::vector<SeqTensors> split_rows(const SpecBatch& b);

// Unpad-append-repad of one model's cache: every row's content (mask == 1) is moved to the right
// end in order, with the minimal left padding (columns that are padding in every row vanish).
// No-op when the mask has no holes and no shared padding.
void realign(CacheState& s, int64_t reserve);
// True when the cache is rectangular already (no holes, no shared padding column).
bool is_aligned(const CacheState& s);

// Keeps only the given rows (int64 indices), then realigns.
void select_rows(SpecBatch& b, const at::Tensor& rows, int64_t reserve);

}  // namespace exspec
