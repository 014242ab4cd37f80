#include "model/paper/spec_batch.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/oracle/padding.h"

namespace exspec {
namespace {

at::Tensor cpu_longs(const std::vector<int64_t>& v) { return at::tensor(v, at::kLong); }

// Drops the leading columns that no row uses.
at::Tensor trim_lag(const at::Tensor& lag) {
  if (lag.size(1) == 0) return lag;
  const int64_t used = lag.ge(0).sum(1).max().item<int64_t>();
  return lag.narrow(1, lag.size(1) - used, used).contiguous();
}

}  // namespace

namespace {

// One forward over left-padded prefixes; each row's cache (views into the batch's buffers).
std::vector<SeqCache> prefill_chunk(const Decoder& model, const std::vector<std::vector<int64_t>>& prefixes) {
  const int64_t B = static_cast<int64_t>(prefixes.size());
  PaddedBatch pb = left_pad(prefixes, 0, model.device());
  const int64_t T = pb.ids.size(1);
  KVCache cache = new_dense_cache(model, B, T);
  if (T > 0) dense_forward(model, pb.ids, pb.positions, pb.mask, cache, /*num_logits=*/0);
  std::vector<SeqCache> out;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = static_cast<int64_t>(prefixes[b].size());
    std::vector<at::Tensor> k, v;
    for (int64_t l = 0; l < cache.num_layers(); ++l) {
      k.push_back(cache.keys(l).narrow(0, b, 1).narrow(2, T - n, n));
      v.push_back(cache.values(l).narrow(0, b, 1).narrow(2, T - n, n));
    }
    out.push_back(KVCache::from_tensors(std::move(k), std::move(v)));
  }
  return out;
}

}  // namespace

std::vector<SeqCache> prefill_caches(const Decoder& model, const std::vector<std::vector<int64_t>>& prefixes) {
  // Prompts of very different lengths padded to the longest waste most of the forward (a
  // window refill of mixed chat prompts: docs/performance.md#figures-that-were-in-code-comments). Chunks of
  // similar length, longest first, keep the padding under a quarter of each chunk.
  std::vector<size_t> order(prefixes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return prefixes[a].size() > prefixes[b].size(); });
  std::vector<SeqCache> out(prefixes.size());
  for (size_t start = 0; start < order.size();) {
    const size_t longest = prefixes[order[start]].size();
    size_t end = start + 1, content = longest;
    while (end < order.size() && 4 * (content + prefixes[order[end]].size()) >= 3 * longest * (end - start + 1)) {
      content += prefixes[order[end]].size();
      ++end;
    }
    std::vector<std::vector<int64_t>> chunk;
    for (size_t i = start; i < end; ++i) chunk.push_back(prefixes[order[i]]);
    std::vector<SeqCache> caches = prefill_chunk(model, chunk);
    for (size_t i = start; i < end; ++i) out[order[i]] = std::move(caches[i - start]);
    start = end;
  }
  return out;
}

namespace {

CacheState stack(const std::vector<const SeqCache*>& rows, int64_t reserve, at::Device device) {
  CacheState s;
  s.cache = KVCache::stack_right_aligned(rows, reserve);
  const int64_t B = static_cast<int64_t>(rows.size()), L = s.cache.length();
  std::vector<int64_t> counts;
  for (const SeqCache* r : rows) counts.push_back(r->length());
  at::Tensor pos = at::arange(L, at::kLong).view({1, L});
  s.mask = (pos >= (L - cpu_longs(counts)).view({B, 1})).to(at::kLong).to(device);
  return s;
}

at::Device device_of(const SeqTensors& s) {
  if (s.parked_target >= 0) return s.parked->target.cache.keys(0).device();
  return s.target.empty() ? at::Device(at::kCPU) : s.target.keys(0).device();
}

SeqCache row_cache(const CacheState& state, int64_t row, int64_t n);

}  // namespace

std::vector<SeqTensors> prefill(const Decoder& target, const Decoder* draft,
                                const std::vector<std::vector<int64_t>>& prompts) {
  std::vector<std::vector<int64_t>> prefixes;
  for (const auto& p : prompts) {
    if (p.empty()) throw std::invalid_argument("prefill: empty prompt");
    prefixes.emplace_back(p.begin(), p.end() - 1);
  }
  std::vector<SeqCache> t = prefill_caches(target, prefixes);
  std::vector<SeqTensors> out;
  for (size_t i = 0; i < prompts.size(); ++i) out.push_back(new_sequence(std::move(t[i]), prompts[i], draft != nullptr));
  return out;
}

SeqTensors new_sequence(SeqCache target, const std::vector<int64_t>& prompt, bool has_draft) {
  if (prompt.empty()) throw std::invalid_argument("new_sequence: empty prompt");
  SeqTensors s;
  s.target = std::move(target);
  s.length = static_cast<int64_t>(prompt.size());
  s.pending = prompt.back();
  s.has_draft = has_draft;
  if (has_draft) s.lag_tokens.assign(prompt.begin(), prompt.end() - 1);
  return s;
}

namespace {

bool is_parked_batch(const std::vector<const SeqTensors*>& seqs) {
  const SpecBatch* parked = seqs[0]->parked.get();
  bool same = parked && parked->batch() == static_cast<int64_t>(seqs.size());
  for (size_t i = 0; same && i < seqs.size(); ++i)
    same = seqs[i]->parked.get() == parked && seqs[i]->parked_row == static_cast<int64_t>(i);
  return same;
}

}  // namespace

SpecBatch assemble(const std::vector<const SeqTensors*>& seqs, int64_t reserve, bool reuse) {
  if (seqs.empty()) throw std::invalid_argument("assemble: no sequences");
  if (reuse) {
    if (!is_parked_batch(seqs)) throw std::logic_error("assemble: the rows are not the batch they were cut from");
    // Shallow copy: the buffers are shared, and only this batch appends to them (beyond every
    // row view cut from them).
    return *seqs[0]->parked;
  }
  SpecBatch b;
  const at::Device dev = device_of(*seqs[0]);
  std::vector<const SeqCache*> t, d;
  std::vector<SeqCache> cut;  // the caches of rows still only in their parked batch
  cut.reserve(2 * seqs.size());
  auto cache = [&](const SeqTensors& s, bool target) -> const SeqCache* {
    const int64_t n = target ? s.parked_target : s.parked_draft;
    if (n < 0) return target ? &s.target : &s.draft;
    if (!s.parked) throw std::logic_error("assemble: a row's caches are in a batch it no longer holds");
    return &cut.emplace_back(row_cache(target ? s.parked->target : s.parked->draft, s.parked_row, n));
  };
  std::vector<int64_t> pending, lengths;
  size_t lag = 0;
  for (const SeqTensors* s : seqs) lag = std::max(lag, s->lag_tokens.size());
  std::vector<int64_t> lags(seqs.size() * lag, -1);  // right-aligned rows
  for (size_t r = 0; r < seqs.size(); ++r) {
    const SeqTensors* s = seqs[r];
    t.push_back(cache(*s, true));
    d.push_back(cache(*s, false));
    pending.push_back(s->pending);
    lengths.push_back(s->length);
    std::copy(s->lag_tokens.begin(), s->lag_tokens.end(), lags.begin() + ((r + 1) * lag - s->lag_tokens.size()));
  }
  b.target = stack(t, reserve, dev);
  b.has_draft = seqs[0]->has_draft;
  if (b.has_draft) b.draft = stack(d, reserve + 1 + static_cast<int64_t>(lag), dev);
  b.pending = cpu_longs(pending);
  b.lag_tokens = cpu_longs(lags).view({static_cast<int64_t>(seqs.size()), static_cast<int64_t>(lag)});
  b.lengths = cpu_longs(lengths);
  return b;
}

bool is_aligned(const CacheState& s) {
  if (s.cache.empty() || s.mask.size(1) == 0) return true;
  const int64_t S = s.mask.size(1);
  at::Tensor counts = s.mask.sum(1, /*keepdim=*/true);
  if (counts.max().item<int64_t>() != S) return false;  // a column of shared padding
  at::Tensor want = at::arange(S, s.mask.options()).view({1, S}) >= (S - counts);
  return at::equal(want.to(at::kLong), s.mask);
}

void realign(CacheState& s, int64_t reserve) {
  if (s.cache.empty() || is_aligned(s)) return;
  const int64_t S = s.mask.size(1);
  const int64_t L = s.mask.sum(1).max().item<int64_t>();
  // A stable sort of the 0/1 mask puts each row's padding and holes first and its content last,
  // in order: the last L columns of the permutation are the realigned layout.
  auto [sorted, order] = at::sort(s.mask, /*stable=*/true, /*dim=*/1, /*descending=*/false);
  at::Tensor index = order.narrow(1, S - L, L);
  s.cache = s.cache.gather_positions(index, reserve);
  s.mask = sorted.narrow(1, S - L, L).contiguous();
}

void select_rows(SpecBatch& b, const at::Tensor& rows, int64_t reserve) {
  at::Tensor r = rows.to(at::kLong);
  for (CacheState* s : {&b.target, &b.draft}) {
    if (s->cache.empty()) continue;
    s->cache = s->cache.select_rows(r);
    s->mask = s->mask.index_select(0, r.to(s->mask.device()));
    realign(*s, reserve);
  }
  b.pending = b.pending.index_select(0, r);
  b.lag_tokens = trim_lag(b.lag_tokens.index_select(0, r));
  b.lengths = b.lengths.index_select(0, r);
}

namespace {

// Row `row` of a realigned cache state as a sequence cache: views of its last n positions.
SeqCache row_cache(const CacheState& state, int64_t row, int64_t n) {
  const int64_t S = state.mask.size(1);
  std::vector<at::Tensor> k, v;
  for (int64_t l = 0; l < state.cache.num_layers(); ++l) {
    k.push_back(state.cache.keys(l).narrow(0, row, 1).narrow(2, S - n, n));
    v.push_back(state.cache.values(l).narrow(0, row, 1).narrow(2, S - n, n));
  }
  return KVCache::from_tensors(std::move(k), std::move(v));
}

std::vector<int64_t> to_vector(const at::Tensor& t) {
  at::Tensor c = t.to(at::kCPU).to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// Rows [first, first + count) as sequence states. Per-batch work (alignment checks, content
// counts, moving small tensors to the host) is done once, not once a row: a step of a plain
// batch of 32 spends its realignment time here. The caches stay in the batch: each row's content
// count is recorded, and assemble() cuts them out when another batch needs them.
std::vector<SeqTensors> cut_rows(const SpecBatch& b, int64_t first, int64_t count) {
  std::vector<SeqTensors> out(count);
  for (auto [state, target] : {std::make_pair(&b.target, true), std::make_pair(&b.draft, false)}) {
    if (state->cache.empty()) continue;
    if (!is_aligned(*state)) throw std::logic_error("split_rows: realign the batch first");
    const std::vector<int64_t> n = to_vector(state->mask.sum(1));
    for (int64_t r = 0; r < count; ++r) (target ? out[r].parked_target : out[r].parked_draft) = n[first + r];
  }
  const std::vector<int64_t> lengths = to_vector(b.lengths), pending = to_vector(b.pending);
  const int64_t L = b.lag_tokens.size(1);
  const std::vector<int64_t> lag = to_vector(b.lag_tokens);
  for (int64_t r = 0; r < count; ++r) {
    SeqTensors& s = out[r];
    s.has_draft = b.has_draft;
    s.length = lengths[first + r];
    s.pending = pending[first + r];
    for (int64_t j = 0; j < L; ++j)
      if (lag[(first + r) * L + j] >= 0) s.lag_tokens.push_back(lag[(first + r) * L + j]);
  }
  return out;
}

}  // namespace

std::vector<SeqTensors> split_rows(const SpecBatch& b) {
  auto parked = std::make_shared<const SpecBatch>(b);
  std::vector<SeqTensors> out = cut_rows(b, 0, b.batch());
  for (int64_t r = 0; r < b.batch(); ++r) {
    out[r].parked = parked;
    out[r].parked_row = r;
  }
  return out;
}

}  // namespace exspec
