#include "actors/jobs/inplace_jobs.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

#include "model/decoder.h"
#include "model/inplace.h"
#include "model/kv_store.h"

namespace exspec {
namespace {

template <class Row>
std::vector<Row*> pointers(std::vector<SlotRow>& rows) {
  std::vector<Row*> p;
  for (SlotRow& r : rows) p.push_back(&r);
  return p;
}

void copy(const Models& m, const BlockCopies& c) {
  if (!m.target_store) throw std::logic_error("a block copy without the target's store");
  m.target_store->copy_blocks(c.target);
  if (m.draft_store) m.draft_store->copy_blocks(c.draft);
}

}  // namespace

void ChunkJob::assemble(const Models& m) {
  if (!assembles()) return;
  timed(outcome.error, outcome.seconds, "copying cached blocks", [&] { copy(m, plan.copies); });
}

void ChunkJob::draft(const Decoder& draft, KVStore* store) {
  timed(outcome.error, outcome.seconds, "draft prefill", [&] {
    if (!store) throw std::logic_error("an in-place prefill without the draft's store");
    for (const SlotRow& r : plan.rows)
      if (r.draft_len != r.target_len) throw std::logic_error("the draft's slot is not where the target's is");
    // The draft's store in the target's place, on a copy of the rows (the verifier stores the
    // target's chunk from the plan's): the chunk rule sees the same lengths, so it picks the
    // same chunk the verifier will.
    std::vector<SlotRow> rows = plan.rows;
    prefill_chunk(ModelSet{&draft, store}, pointers<SlotRow>(rows), plan.chunk);
    // In the target's place the draft's store advanced target_len: what it holds now.
    for (const SlotRow& r : rows) drafted.push_back(r.target_len);
  });
}

// The target stores the next chunk of the prompts. The draft holds what the drafter's call left
// (it stored the same chunk), or, without it, what it held.
void ChunkJob::run_target(const Decoder& target, KVStore* store) {
  timed(outcome.error, outcome.seconds, "prefill", [&] {
    if (!store) throw std::logic_error("an in-place prefill without the target's store");
    prefill_chunk(ModelSet{&target, store}, pointers<SlotRow>(plan.rows), plan.chunk, plan.prompt_logprobs,
                  plan.prompt_logprobs >= 0 ? &outcome.prompt_logprobs : nullptr);
    for (size_t i = 0; i < plan.rows.size(); ++i) {
      const SlotRow& r = plan.rows[i];
      outcome.stored.push_back({r.target_len, drafted.empty() ? r.draft_len : drafted[i]});
    }
  });
}

void StepJob::assemble(const Models& m) {
  if (!assembles()) return;
  timed(outcome.error, outcome.times.align_s, "moving slots", [&] {
    copy(m, plan.copies);
    for (const SlotMove& mv : plan.moves) copy(m, BlockCopies{mv.target, mv.draft});
  });
}

void StepJob::draft(const Decoder& draft, KVStore* store) {
  timed(outcome.error, outcome.times.draft_s, "drafting", [&] {
    if (!store) throw std::logic_error("an in-place step without the draft's store");
    const ModelSet m{nullptr, nullptr, &draft, store};
    drafted = draft_inplace(m, pointers<const SlotRow>(plan.rows), plan.k, plan.sampling);
  });
}

void settle_drafts(StepJob& j) {
  const StepPlan& p = j.plan;
  const int64_t B = static_cast<int64_t>(p.ids.size()), k = p.k;
  if (!p.by_model) j.drafted = at::empty({B, k}, at::kLong);
  if (k == 0 || (p.by_model && p.proposed.empty())) return;
  if (static_cast<int64_t>(p.proposed.size()) != B) throw std::logic_error("a step drafts without proposals");
  j.drafted = j.drafted.to(at::kCPU).contiguous();  // the proposals join the drafts on the host
  j.agree.assign(static_cast<size_t>(B), k);
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<int64_t>& mine = p.proposed[static_cast<size_t>(b)];
    int64_t* row = j.drafted.data_ptr<int64_t>() + b * k;
    const int64_t n = std::min<int64_t>(k, static_cast<int64_t>(mine.size()));
    int64_t agree = 0;
    while (agree < n && row[agree] == mine[static_cast<size_t>(agree)]) ++agree;
    if (agree < n) j.agree[static_cast<size_t>(b)] = agree;
    std::copy(mine.begin(), mine.begin() + n, row);
    if (p.by_model) continue;  // past the proposal: the draft model's
    // Without the draft model, past the proposal: its last token (or pending) again. Whatever
    // fills it is verified like any draft, so it changes no output; a row without a proposal
    // in a step that drafts is one whose proposer found nothing this time.
    const int64_t fill = n > 0 ? mine[static_cast<size_t>(n - 1)] : p.rows[static_cast<size_t>(b)].tokens.back();
    std::fill(row + n, row + k, fill);
  }
}

// Verification in place: the outcome straight from the accepted counts: what each store holds of
// each row after the commit (the target's: what was accepted; the draft's: what it was fed and
// kept), which the next plan hands to the next forwards.
void StepJob::run_target(const Decoder& target, KVStore* store) {
  timed(outcome.error, outcome.times.verify_s, "verification", [&] {
    if (!store) throw std::logic_error("an in-place step without the target's store");
    settle_drafts(*this);
    const ModelSet m{&target, store};
    verified = verify_inplace(m, pointers<const SlotRow>(plan.rows), drafted, plan.sampling);
    commit_inplace(pointers<SlotRow>(plan.rows), verified, drafted.size(1), agree);
    take_verified(verified, outcome);
    for (const SlotRow& r : plan.rows) outcome.stored.push_back(r.stored());
  });
}

}  // namespace exspec
