#include "actors/scheduler/sequence_pool.h"

#include <algorithm>
#include <stdexcept>

#include "grammar/matcher.h"

namespace exspec {

SeqId SequencePool::admit(SeqRequest request, int priority, SeqId id) {
  if (id == 0) id = next_id_++;
  if (seqs_.count(id)) throw std::invalid_argument("SequencePool: duplicate sequence id " + std::to_string(id));
  Sequence s;
  s.id = id;
  s.request = std::move(request);
  s.priority = priority;
  if (s.request.grammar) s.matcher = std::make_shared<grammar::Matcher>(s.request.grammar);
  if (s.request.max_tokens == 0 && !s.request.scores_prompt()) {  // never waits: it left the queue as it came
    s.state = SeqState::Finished;
    s.finish = FinishReason::Length;
    ++dequeued_;
  } else {
    waiting_.push_back(id);
    ++unfinished_;
  }
  seqs_.emplace(id, std::move(s));
  return id;
}

Sequence& SequencePool::at(SeqId id) {
  auto it = seqs_.find(id);
  if (it == seqs_.end()) throw std::out_of_range("SequencePool: unknown sequence " + std::to_string(id));
  return it->second;
}

const Sequence& SequencePool::at(SeqId id) const { return const_cast<SequencePool*>(this)->at(id); }

std::vector<SeqId> SequencePool::take_waiting(size_t n, bool sort_by_length,
                                             const std::function<bool(const Sequence&)>& fits) {
  std::vector<SeqId> order(waiting_.begin(), waiting_.end());
  std::stable_sort(order.begin(), order.end(), [&](SeqId a, SeqId b) {
    const Sequence &x = seqs_.at(a), &y = seqs_.at(b);
    if (x.priority != y.priority) return x.priority > y.priority;
    if (sort_by_length) return x.request.prompt.size() < y.request.prompt.size();
    return false;
  });
  order.resize(std::min(n, order.size()));
  if (fits) {
    size_t take = 0;
    while (take < order.size() && fits(seqs_.at(order[take]))) ++take;
    order.resize(take);
  }
  for (SeqId id : order) {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), id));
    Sequence& s = seqs_.at(id);
    if (s.state == SeqState::Waiting) ++dequeued_;
    s.state = SeqState::Prefilling;
  }
  return order;
}

void SequencePool::preempt(SeqId id) {
  Sequence& s = at(id);
  if (s.state != SeqState::Prefilling && s.state != SeqState::Running)
    throw std::logic_error("pre-emption of a sequence that is not live");
  s.state = SeqState::Preempted;
  waiting_.push_front(id);
}

size_t SequencePool::write_back(SeqId id, const int64_t* tokens, size_t n, const TokenLogprob* logprobs) {
  Sequence& s = at(id);
  if (s.state != SeqState::Running) throw std::logic_error("write_back to a sequence that is not running");
  size_t used = 0;
  while (used < n && s.finish == FinishReason::None) {
    if (logprobs) s.logprobs.push_back(logprobs[used]);
    s.generated.push_back(tokens[used++]);
    s.finish = finish_after(s.request, s.generated.back(), static_cast<int64_t>(s.generated.size()));
  }
  if (s.finish != FinishReason::None) {
    s.state = SeqState::Finished;
    --unfinished_;
  }
  return used;
}

std::vector<RowSampling> sampling_rows(const SequencePool& pool, const std::vector<SeqId>& ids) {
  std::vector<RowSampling> rows;
  bool any = false;
  for (SeqId id : ids) {
    const SamplingParams& p = pool.at(id).request.sampling;
    any = any || !p.plain_greedy() || p.logprobs >= 0 || pool.at(id).matcher;
  }
  if (!any) return rows;
  for (SeqId id : ids) {
    const Sequence& s = pool.at(id);
    rows.push_back(row_sampling(s.request.sampling, s.request.prompt, s.generated));
    rows.back().matcher = s.matcher;
  }
  return rows;
}

std::vector<SeqId> SequencePool::unfinished_ids() const {
  std::vector<SeqId> ids;
  for (const auto& [id, s] : seqs_)
    if (s.state != SeqState::Finished) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

void SequencePool::cancel(SeqId id) {
  Sequence& s = at(id);
  if (s.state == SeqState::Finished) return;
  if (s.state == SeqState::Waiting) ++dequeued_;  // leaves the queue without being taken
  if (s.state == SeqState::Waiting || s.state == SeqState::Preempted)
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), id));
  s.state = SeqState::Finished;
  s.finish = FinishReason::None;
  --unfinished_;
}

}  // namespace exspec
