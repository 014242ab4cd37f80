#include "model/tools/calibrate.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "model/decoder.h"
#include "model/initial_thread.h"
#include "model/kv_store.h"

namespace exspec {
namespace {

// Runs a forward where the roles run theirs, and waits for its result.
void synced(const ForwardRun& run, int threads) { run_on_initial_thread(run, threads); }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

at::Tensor ids_of(const std::vector<std::vector<int64_t>>& seqs) {
  std::vector<int64_t> flat;
  for (const auto& s : seqs) flat.insert(flat.end(), s.begin(), s.end());
  return at::tensor(flat, at::kLong).view({static_cast<int64_t>(seqs.size()), -1});
}

// Each row continued by `tokens` of the model's greedy tokens, one forward_slots a token, each
// row on its own slot.
void continue_greedy(const Decoder& m, std::vector<std::vector<int64_t>>& seqs, int64_t tokens) {
  const int64_t rows = static_cast<int64_t>(seqs.size()), prompt = static_cast<int64_t>(seqs[0].size());
  KVStore store = m.new_store(rows, prompt + tokens);
  std::vector<SlotSpan> spans;
  for (int64_t r = 0; r < rows; ++r) spans.push_back({r, 0, prompt, {}});
  at::Tensor ids = ids_of(seqs);
  for (int64_t t = 0; t < tokens; ++t) {
    const at::Tensor next =
        m.forward_slots(ids, spans, store, Decoder::Logits::Last).argmax(-1).to(at::kCPU).view({rows});
    const auto n = next.accessor<int64_t, 1>();
    for (int64_t r = 0; r < rows; ++r) {
      seqs[static_cast<size_t>(r)].push_back(n[r]);
      spans[static_cast<size_t>(r)].start += spans[static_cast<size_t>(r)].count;
      spans[static_cast<size_t>(r)].count = 1;
    }
    ids = next.view({rows, 1});
  }
}

}  // namespace

double fastest(int reps, const std::function<void()>& run) {
  run();
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(1, reps); ++r) {
    const auto t = std::chrono::steady_clock::now();
    run();
    best = std::min(best, seconds_since(t));
  }
  return best;
}

ForwardRun slots_forward(const Decoder& m, int64_t rows, int64_t tokens, int64_t context, bool last_only) {
  auto store = std::make_shared<KVStore>(m.new_store(rows, context + tokens));
  std::vector<SlotSpan> spans;
  for (int64_t r = 0; r < rows; ++r) spans.push_back({r, context, tokens, {}});
  const at::Tensor ids = at::zeros({rows, tokens}, at::kLong);
  const Decoder::Logits which = last_only ? Decoder::Logits::Last : Decoder::Logits::All;
  return [&m, store, spans, ids, which] { m.forward_slots(ids, spans, *store, which).sum().item<double>(); };
}

double time_forward(const Decoder& m, int64_t rows, int64_t tokens, int64_t context, int reps, const ForwardPath& path,
                    int threads, bool last_only) {
  const ForwardRun run = path(m, rows, tokens, context, last_only);
  return fastest(reps, [&] { synced(run, threads); });
}

double overlap_serial_share(const Decoder& target, const Decoder& draft, int64_t rows, int64_t k, int64_t context,
                            int reps, const ForwardPath& path, ForwardThreads threads) {
  if (on_unparked_initial_thread()) return 1.0;  // every forward will run here, one at a time
  k = std::max<int64_t>(1, k);
  const ForwardRun verify_run = path(target, rows, k + 1, context, false);
  const ForwardRun draft_run = path(draft, rows, 1, context, true);
  // Each phase as its role hands it over: the verifier's forward, then the drafter's k forwards.
  auto verify = [&] { synced(verify_run, threads.target); };
  auto drafts = [&] {
    for (int64_t j = 0; j < k; ++j) synced(draft_run, threads.draft);
  };
  verify();  // warm-up
  drafts();
  auto wall = [](const std::function<void()>& f) {
    const auto t = std::chrono::steady_clock::now();
    f();
    return seconds_since(t);
  };
  double best = 1;
  for (int r = 0; r < std::max(1, reps); ++r) {
    const double v = wall(verify), d = wall(drafts);
    const double both = wall([&] {
      std::thread other(drafts);
      verify();
      other.join();
    });
    const double lo = std::min(v, d);
    if (lo > 0) best = std::min(best, std::clamp((both - std::max(v, d)) / lo, 0.0, 1.0));
  }
  return best;
}

AgreementSample measure_agreement(const Decoder& target, const Decoder& draft, int64_t rows, int64_t prompt,
                                  int64_t tokens, uint64_t seed) {
  const int64_t vocab = std::min(target.config().vocab_size, draft.config().vocab_size);
  tokens = std::min(tokens, target.config().max_position_embeddings - prompt);
  AgreementSample out;
  if (vocab <= 0 || rows <= 0 || prompt <= 0 || tokens <= 0) return out;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> id(0, vocab - 1);
  std::vector<std::vector<int64_t>> seqs(static_cast<size_t>(rows));
  for (auto& s : seqs)
    for (int64_t i = 0; i < prompt; ++i) s.push_back(id(rng));
  continue_greedy(target, seqs, tokens);
  const int64_t T = prompt + tokens;
  KVStore store = draft.new_store(rows, T);
  std::vector<SlotSpan> spans;
  for (int64_t r = 0; r < rows; ++r) spans.push_back({r, 0, T, {}});
  // The draft's prediction at position p - 1 is its guess for token p.
  const at::Tensor guess =
      draft.forward_slots(ids_of(seqs), spans, store, Decoder::Logits::All).argmax(-1).to(at::kCPU);
  const auto g = guess.accessor<int64_t, 2>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t p = prompt; p < T; ++p) {
      out.agreed += g[r][p - 1] == seqs[static_cast<size_t>(r)][static_cast<size_t>(p)];
      ++out.positions;
    }
  return out;
}

}  // namespace exspec
