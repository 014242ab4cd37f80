#include "actors/step_phases.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>

#include "model/decoder.h"
#include "model/inplace.h"

namespace exspec {
namespace {

// Runs a phase unless an earlier one failed; adds its time to `seconds`; a failure becomes the
// outcome's error (the scheduler fails the work's sequences with it).
void timed(std::string& error, double& seconds, const char* what, const std::function<void()>& phase) {
  if (!error.empty()) return;
  const auto t = std::chrono::steady_clock::now();
  try {
    phase();
  } catch (const std::exception& e) {
    error = std::string(what) + " failed: " + e.what();
  }
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::vector<int64_t> lag_counts(const SpecBatch& b) {
  at::Tensor n = b.draft_lag.ge(0).sum(1).to(at::kLong).contiguous();
  return std::vector<int64_t>(n.data_ptr<int64_t>(), n.data_ptr<int64_t>() + n.numel());
}

template <class Row>
std::vector<Row*> pointers(std::vector<SlotRow>& rows) {
  std::vector<Row*> p;
  for (SlotRow& r : rows) p.push_back(&r);
  return p;
}

// The target stores the next chunk of the prompts. The draft's lag is what the drafter's
// phase left (it stored the same chunk), or, without it, unchanged.
void prefill_in_place(const Decoder& target, KVStore& store, PrefillWork& w) {
  std::vector<SlotRow>& rows = w.plan.slot_rows;
  prefill_chunk(InplaceModels{&target, &store}, pointers<SlotRow>(rows), w.plan.chunk);
  const bool drafted = !w.outcome.draft_lag.empty();
  for (const SlotRow& r : rows) {
    w.outcome.stored.push_back(r.target_len);
    if (!drafted) w.outcome.draft_lag.push_back(r.draft_lag());
  }
}

// Each row's accepted count, committed tokens (accepted drafts, then the bonus) and logprobs.
void take_verified(VerifyResult& v, StepOutcome& o) {
  const int64_t B = v.accepted.size(0);
  at::Tensor toks = v.tokens.contiguous();
  auto acc = v.accepted.accessor<int64_t, 1>();
  o.committed.assign(B, {});
  o.accepted.assign(B, 0);
  o.logprobs = std::move(v.logprobs);
  for (int64_t b = 0; b < B; ++b) {
    o.accepted[b] = acc[b];
    const int64_t* t = toks[b].data_ptr<int64_t>();
    o.committed[b].assign(t, t + acc[b] + 1);
  }
}

// Verification in place: the outcome straight from the accepted counts, nothing to split.
void verify_in_place(const Decoder& target, KVStore& store, StepWork& w) {
  std::vector<SlotRow>& rows = w.plan.slot_rows;
  const InplaceModels m{&target, &store};
  w.verified = verify_inplace(m, pointers<const SlotRow>(rows), w.drafts, w.plan.sampling);
  // The target's slots keep what was accepted; the draft's are the drafter's: its next phase
  // sets them from the next plan, which carries the lag reported here.
  commit_inplace(m, pointers<SlotRow>(rows), w.verified, w.drafts.size(1), w.agree);
  take_verified(w.verified, w.outcome);
  for (const SlotRow& r : rows) {
    w.outcome.draft_lag.push_back(r.draft_lag());
    w.outcome.stored.push_back(r.target_len);
  }
}

}  // namespace

void prefill_phase(const Decoder& target, PrefillWork& w, KVStore* store) {
  PrefillOutcome& o = w.outcome;
  o.serial = w.plan.serial;
  if (store) {
    timed(o.error, o.seconds, "prefill", [&] { prefill_in_place(target, *store, w); });
    return;
  }
  timed(o.error, o.seconds, "prefill", [&] {
    std::vector<std::vector<int64_t>> prefixes;
    for (const auto& p : w.plan.prompts) {
      if (p.empty()) throw std::invalid_argument("empty prompt");
      prefixes.emplace_back(p.begin(), p.end() - 1);
    }
    std::vector<SeqCache> caches = prefill_caches(target, prefixes);
    for (size_t i = 0; i < caches.size(); ++i) {
      auto s = std::make_shared<SeqTensors>(new_sequence(std::move(caches[i]), w.plan.prompts[i], w.plan.with_draft));
      o.draft_lag.push_back(static_cast<int64_t>(s->draft_lag.size()));
      o.states.push_back(std::move(s));
    }
  });
}

void draft_prefill_phase(const Decoder& draft, PrefillWork& w, KVStore* store) {
  PrefillOutcome& o = w.outcome;
  o.serial = w.plan.serial;
  timed(o.error, o.seconds, "draft prefill", [&] {
    if (!store) throw std::logic_error("an in-place prefill without the draft's store");
    for (const SlotRow& r : w.plan.slot_rows)
      if (r.draft_len != r.target_len) throw std::logic_error("the draft's slot is not where the target's is");
    // The draft's store in the target's place, on a copy of the rows (the verifier stores the
    // target's chunk from the plan's): the chunk rule sees the same lengths, so it picks the
    // same chunk the verifier will.
    std::vector<SlotRow> rows = w.plan.slot_rows;
    prefill_chunk(InplaceModels{&draft, store}, pointers<SlotRow>(rows), w.plan.chunk);
    // In the target's place the draft's store advanced target_len: what it lacks is what the
    // copy has left to store.
    for (const SlotRow& r : rows) o.draft_lag.push_back(r.prefill_remaining());
  });
}

void assemble_phase(StepWork& w) {
  StepPlan& p = w.plan;
  w.outcome.serial = p.serial;
  if (p.assembly == Assembly::InPlace) return;  // the rows are in their slots already
  timed(w.outcome.error, w.outcome.times.align_s, "assembling the batch", [&] {
    if (p.assembly == Assembly::Continue) {
      w.batch = std::move(*p.batch);
      p.batch.reset();
      if (!p.drop_rows.empty()) {
        std::vector<int64_t> keep;
        for (int64_t b = 0, d = 0; b < w.batch.batch(); ++b) {
          if (d < static_cast<int64_t>(p.drop_rows.size()) && p.drop_rows[d] == b) ++d;
          else keep.push_back(b);
        }
        select_rows(w.batch, at::tensor(keep, at::kLong), p.reserve);
      }
    } else {
      std::vector<const SeqTensors*> rows;
      for (const auto& s : p.rows) rows.push_back(s.get());
      w.batch = assemble(rows, p.reserve, p.assembly == Assembly::Reuse);
      p.rows.clear();  // the batch holds the caches now
    }
  });
}

void draft_phase(const Decoder& draft, StepWork& w, KVStore* store) {
  timed(w.outcome.error, w.outcome.times.draft_s, "drafting", [&] {
    if (w.plan.assembly != Assembly::InPlace) {
      w.drafts = draft_tokens(draft, w.batch, w.plan.k);
      return;
    }
    if (!store) throw std::logic_error("an in-place step without the draft's store");
    const InplaceModels m{nullptr, nullptr, &draft, store};
    w.drafts = draft_inplace(m, pointers<const SlotRow>(w.plan.slot_rows), w.plan.k);
  });
}

void settle_drafts(StepWork& w) {
  const StepPlan& p = w.plan;
  const int64_t B = static_cast<int64_t>(p.ids.size()), k = p.k;
  if (!p.by_model) w.drafts = at::empty({B, k}, at::kLong);
  if (k == 0 || (p.by_model && p.proposed.empty())) return;
  if (static_cast<int64_t>(p.proposed.size()) != B) throw std::logic_error("a step drafts without proposals");
  w.drafts = w.drafts.contiguous();
  w.agree.assign(static_cast<size_t>(B), k);
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<int64_t>& mine = p.proposed[static_cast<size_t>(b)];
    int64_t* row = w.drafts.data_ptr<int64_t>() + b * k;
    const int64_t n = std::min<int64_t>(k, static_cast<int64_t>(mine.size()));
    int64_t agree = 0;
    while (agree < n && row[agree] == mine[static_cast<size_t>(agree)]) ++agree;
    if (agree < n) w.agree[static_cast<size_t>(b)] = agree;
    std::copy(mine.begin(), mine.begin() + n, row);
    if (p.by_model) continue;  // past the proposal: the draft model's
    // Without the draft model, past the proposal: its last token (or pending) again. Whatever
    // fills it is verified like any draft, so it changes no output; a row without a proposal
    // in a step that drafts is one whose proposer found nothing this time.
    const int64_t fill = n > 0 ? mine[static_cast<size_t>(n - 1)] : p.slot_rows[static_cast<size_t>(b)].tokens.back();
    std::fill(row + n, row + k, fill);
  }
}

void verify_phase(const Decoder& target, StepWork& w, KVStore* store) {
  timed(w.outcome.error, w.outcome.times.verify_s, "verification", [&] {
    if (w.plan.assembly == Assembly::InPlace) {
      if (!store) throw std::logic_error("an in-place step without the target's store");
      settle_drafts(w);
      verify_in_place(target, *store, w);
      return;
    }
    if (!w.drafts.defined()) w.drafts = at::empty({w.batch.batch(), 0}, at::kLong);
    w.verified = verify(target, w.batch, w.drafts, w.plan.sampling);
    commit(w.batch, w.verified, w.drafts);
  });
}

void split_phase(StepWork& w) {
  StepOutcome& o = w.outcome;
  if (w.plan.assembly == Assembly::InPlace) return;  // verify_phase wrote the outcome
  timed(o.error, o.times.align_s, "realignment", [&] {
    realign(w.batch.target, w.plan.reserve);
    realign(w.batch.draft, w.plan.reserve);
    take_verified(w.verified, o);
    o.draft_lag = lag_counts(w.batch);
    if (w.plan.keep_batch) {
      o.batch = std::make_shared<SpecBatch>(std::move(w.batch));
    } else {
      for (auto& row : split_rows(w.batch)) o.rows.push_back(std::make_shared<SeqTensors>(std::move(row)));
    }
  });
  w.batch = SpecBatch{};  // kept rows live on as views in the pool, a kept batch in the outcome
}

}  // namespace exspec
