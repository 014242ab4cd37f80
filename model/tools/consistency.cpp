#include "model/tools/consistency.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/oracle/plain_decode.h"

namespace exspec {
namespace {

using Prompts = std::vector<std::vector<int64_t>>;

int64_t argmax_id(const at::Tensor& row) { return row.argmax().item<int64_t>(); }

at::Tensor ids_tensor(const std::vector<int64_t>& ids, at::Device dev) {
  return at::tensor(ids, at::kLong).view({1, static_cast<int64_t>(ids.size())}).to(dev);
}

// The KV cache paths, through the plain greedy loop (model/oracle/plain_decode.cpp) that `generate --oracle`
// runs: batch 1 decodes without padding (its steps skip the mask), `batch` = all pads.
PathRun greedy_path(const Decoder& m, const Prompts& prompts, int64_t batch, std::string name, int64_t max_tokens) {
  std::vector<SeqRequest> reqs;
  for (const auto& p : prompts) reqs.push_back(SeqRequest{p, max_tokens, {}});
  PathRun run{std::move(name), {}, {}};
  for (auto& r : plain_decode(m, reqs, batch)) {
    run.fed.push_back(r.tokens);
    run.predicted.push_back(std::move(r.tokens));
  }
  return run;
}

// A verification-shaped forward on a KV cache, batch 1: the prompt, then `width` tokens of
// `drafts` a forward, every position's logits read (what a verifier does with K = width - 1).
PathRun verify_cache_path(const Decoder& m, const Prompts& prompts, const PathRun& drafts, int64_t width) {
  PathRun run{"verification-shaped forwards, KV cache, batch 1", drafts.fed, {}};
  const at::Device dev = m.device();
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::vector<int64_t>& fed = drafts.fed[i];
    const int64_t n = static_cast<int64_t>(fed.size()), P = static_cast<int64_t>(prompts[i].size());
    KVCache cache = new_dense_cache(m, 1, P + n);
    std::vector<int64_t> out;
    auto step = [&](const std::vector<int64_t>& ids, int64_t num_logits) {
      const int64_t T = static_cast<int64_t>(ids.size()), at_pos = cache.length();
      at::Tensor pos = at::arange(at_pos, at_pos + T, at::kLong).view({1, T}).to(dev);
      at::Tensor logits =
          dense_forward(m, ids_tensor(ids, dev), pos, at::ones({1, at_pos + T}, at::kLong), cache, num_logits);
      for (int64_t t = 0; t < logits.size(1); ++t) out.push_back(argmax_id(logits[0][t]));
    };
    step(prompts[i], 1);
    for (int64_t j = 0; j + 1 < n; j += width)
      step(std::vector<int64_t>(fed.begin() + j, fed.begin() + std::min(n - 1, j + width)), -1);
    run.predicted.push_back(std::move(out));
  }
  return run;
}

// The in-place store: each prompt in its own slot (slot order reversed, so rows that step
// together are not consecutive and their keys are gathered), stored `chunk` tokens a forward.
class SlotRunner {
 public:
  SlotRunner(const Decoder& m, const Prompts& prompts, int64_t extra)
      : m_(m),
        prompts_(prompts),
        store_(m.new_store(static_cast<int64_t>(prompts.size()), longest(prompts) + extra)),
        held_(prompts.size(), 0) {}

  // One forward over `rows`: row r feeds tokens[r] (right-padded); returns the logits read.
  at::Tensor forward(const std::vector<size_t>& rows, const std::vector<std::vector<int64_t>>& tokens,
                     Decoder::Logits which) {
    int64_t T = 0;
    for (const auto& t : tokens) T = std::max<int64_t>(T, static_cast<int64_t>(t.size()));
    std::vector<int64_t> flat;
    std::vector<SlotSpan> spans;
    for (size_t b = 0; b < rows.size(); ++b) {
      for (int64_t t = 0; t < T; ++t) flat.push_back(t < static_cast<int64_t>(tokens[b].size()) ? tokens[b][t] : 0);
      const int64_t n = static_cast<int64_t>(tokens[b].size());
      spans.push_back(SlotSpan{static_cast<int64_t>(prompts_.size() - 1 - rows[b]), held_[rows[b]], n, {}});
    }
    at::Tensor ids = at::tensor(flat, at::kLong).view({static_cast<int64_t>(rows.size()), T}).to(m_.device());
    at::Tensor logits = m_.forward_slots(ids, spans, store_, which).to(at::kCPU, at::kDouble);
    for (size_t b = 0; b < rows.size(); ++b) held_[rows[b]] += spans[b].count;
    return logits;
  }

  // Stores the prompts of `rows` (together) `chunk` tokens a forward; returns each row's
  // prediction after its prompt.
  std::vector<int64_t> prefill(const std::vector<size_t>& rows, int64_t chunk) {
    std::vector<int64_t> first(rows.size(), -1), done(rows.size(), 0);
    while (true) {
      std::vector<size_t> step, index;
      std::vector<std::vector<int64_t>> tokens;
      for (size_t b = 0; b < rows.size(); ++b) {
        const auto& p = prompts_[rows[b]];
        const int64_t left = static_cast<int64_t>(p.size()) - done[b];
        if (left == 0) continue;
        const int64_t n = std::min(chunk, left);
        step.push_back(rows[b]), index.push_back(b);
        tokens.emplace_back(p.begin() + done[b], p.begin() + done[b] + n);
        done[b] += n;
      }
      if (step.empty()) return first;
      at::Tensor logits = forward(step, tokens, Decoder::Logits::Last);
      for (size_t r = 0; r < step.size(); ++r)
        if (done[index[r]] == static_cast<int64_t>(prompts_[step[r]].size()))
          first[index[r]] = argmax_id(logits[static_cast<int64_t>(r)][0]);
    }
  }

 private:
  static int64_t longest(const Prompts& p) {
    int64_t n = 0;
    for (const auto& x : p) n = std::max<int64_t>(n, static_cast<int64_t>(x.size()));
    return n;
  }
  const Decoder& m_;
  const Prompts& prompts_;
  KVStore store_;
  std::vector<int64_t> held_;  // per prompt: the positions its slot holds
};

// Incremental decoding in the store: each row alone (its steps skip the mask), or every row in
// one forward a step (rows of different lengths: masked, gathered).
PathRun slot_decode_path(const Decoder& m, const Prompts& prompts, const ConsistencyOptions& o, bool together) {
  PathRun run{together ? "slots, rows together (scattered slots), chunked prefill"
                       : "slots, one row a forward, chunked prefill",
              std::vector<std::vector<int64_t>>(prompts.size()), std::vector<std::vector<int64_t>>(prompts.size())};
  SlotRunner s(m, prompts, o.max_tokens);
  std::vector<std::vector<size_t>> groups;
  std::vector<size_t> all;
  for (size_t i = 0; i < prompts.size(); ++i) together ? all.push_back(i) : groups.push_back({i});
  if (together) groups.push_back(all);
  for (const auto& rows : groups) {
    std::vector<int64_t> next = s.prefill(rows, o.chunk);
    for (int64_t j = 0; j < o.max_tokens; ++j) {
      std::vector<std::vector<int64_t>> tokens;
      for (size_t b = 0; b < rows.size(); ++b) {
        run.predicted[rows[b]].push_back(next[b]);
        run.fed[rows[b]].push_back(next[b]);
        tokens.push_back({next[b]});
      }
      if (j + 1 == o.max_tokens) break;
      at::Tensor logits = s.forward(rows, tokens, Decoder::Logits::Last);
      for (size_t b = 0; b < rows.size(); ++b) next[b] = argmax_id(logits[static_cast<int64_t>(b)][0]);
    }
  }
  return run;
}

// Verification-shaped forwards in the store, every row together: what the in-place verifier runs.
PathRun verify_slots_path(const Decoder& m, const Prompts& prompts, const PathRun& drafts, const ConsistencyOptions& o) {
  PathRun run{"verification-shaped forwards, slots, rows together", drafts.fed,
              std::vector<std::vector<int64_t>>(prompts.size())};
  SlotRunner s(m, prompts, o.max_tokens);
  std::vector<size_t> rows;
  for (size_t i = 0; i < prompts.size(); ++i) rows.push_back(i);
  std::vector<int64_t> first = s.prefill(rows, o.chunk);
  for (size_t b = 0; b < rows.size(); ++b) run.predicted[b].push_back(first[b]);
  for (int64_t j = 0; j + 1 < o.max_tokens; j += o.verify_width) {
    const int64_t end = std::min(o.max_tokens - 1, j + o.verify_width);
    std::vector<std::vector<int64_t>> tokens;
    for (size_t b = 0; b < rows.size(); ++b) tokens.emplace_back(drafts.fed[b].begin() + j, drafts.fed[b].begin() + end);
    at::Tensor logits = s.forward(rows, tokens, Decoder::Logits::All);
    for (size_t b = 0; b < rows.size(); ++b)
      for (int64_t t = 0; t < end - j; ++t) run.predicted[b].push_back(argmax_id(logits[static_cast<int64_t>(b)][t]));
  }
  return run;
}

}  // namespace

std::vector<PathRun> run_paths(const Decoder& model, const Prompts& prompts, const ConsistencyOptions& o) {
  if (prompts.empty()) throw std::invalid_argument("check: no prompts");
  if (o.max_tokens < 1 || o.chunk < 1 || o.verify_width < 1)
    throw std::invalid_argument("check: max_tokens, chunk and verify width must be >= 1");
  for (const auto& p : prompts) validate_request(model.config(), SeqRequest{p, o.max_tokens, {}});
  std::vector<PathRun> runs;
  runs.push_back(greedy_path(model, prompts, 1, "KV cache, batch 1 (no padding)", o.max_tokens));
  runs.push_back(greedy_path(model, prompts, static_cast<int64_t>(prompts.size()), "KV cache, padded batch",
                             o.max_tokens));
  runs.push_back(slot_decode_path(model, prompts, o, false));
  runs.push_back(slot_decode_path(model, prompts, o, true));
  runs.push_back(verify_cache_path(model, prompts, runs[0], o.verify_width));
  runs.push_back(verify_slots_path(model, prompts, runs[0], o));
  return runs;
}

std::optional<Divergence> first_divergence(const Decoder& m, const Prompts& prompts, const PathRun& run) {
  if (run.fed.size() != prompts.size() || run.predicted.size() != prompts.size())
    throw std::invalid_argument("check: path \"" + run.name + "\" has a different number of prompts");
  const at::Device dev = m.device();
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto& pred = run.predicted[i];
    const int64_t P = static_cast<int64_t>(prompts[i].size()), n = static_cast<int64_t>(pred.size());
    if (n == 0) continue;
    if (static_cast<int64_t>(run.fed[i].size()) < n - 1)
      throw std::invalid_argument("check: path \"" + run.name + "\" fed fewer tokens than it predicted");
    std::vector<int64_t> seq = prompts[i];
    seq.insert(seq.end(), run.fed[i].begin(), run.fed[i].begin() + (n - 1));
    const int64_t L = static_cast<int64_t>(seq.size());
    KVCache cache = new_dense_cache(m, 1, L);
    at::Tensor pos = at::arange(L, at::kLong).view({1, L}).to(dev);
    at::Tensor full =
        dense_forward(m, ids_tensor(seq, dev), pos, at::ones({1, L}, at::kLong), cache).to(at::kCPU, at::kDouble)[0];
    for (int64_t j = 0; j < n; ++j) {
      at::Tensor row = full[P - 1 + j];
      const int64_t want = argmax_id(row);
      if (want == pred[j]) continue;
      at::Tensor top = std::get<0>(row.topk(2));
      return Divergence{i, j, P + j, pred[j], want, (top[0] - top[1]).item<double>(),
                        (row[want] - row[pred[j]]).item<double>()};
    }
  }
  return std::nullopt;
}

}  // namespace exspec
