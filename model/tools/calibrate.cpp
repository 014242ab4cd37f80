#include "model/tools/calibrate.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <thread>

#include <random>

#include "model/decoder.h"
#include "model/oracle/plain_decode.h"
#include "model/initial_thread.h"
#include "model/paper/spec_batch.h"

namespace exspec {
namespace {

using Op = std::function<at::Tensor()>;

// Runs op where the roles run their forwards, and waits for its result.
void synced(const Op& op, int threads) {
  run_on_initial_thread([&] { op().sum().item<double>(); }, threads);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The fastest of reps runs after a warm-up (first-touch allocation, kernel selection).
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

// A copy of the paper's realigner runs on its own thread (here: this one), not handed over.
double fastest_here(int reps, const Op& op) {
  return fastest(reps, [&] { op().sum().item<double>(); });
}

// A cache of `context` zero positions (finite values: the timing must not hit NaN paths).
KVCache filled_cache(const Decoder& m, int64_t rows, int64_t context, int64_t spare) {
  KVCache c = m.new_cache(rows, context + spare);
  c.reserve(context);
  for (int64_t l = 0; l < c.num_layers(); ++l) {
    const at::Tensor k = c.keys(l);
    at::Tensor z = at::zeros({rows, k.size(1), context, k.size(3)}, k.options());
    c.append(l, z, z);
  }
  c.advance(context);
  return c;
}

// One dense forward of rows x tokens over `context` cached positions, inputs built once.
Op dense_op(const Decoder& m, int64_t rows, int64_t tokens, int64_t context) {
  const at::Device dev = m.device();
  at::Tensor ids = at::zeros({rows, tokens}, at::kLong);
  at::Tensor pos = (context + at::arange(tokens, at::kLong)).view({1, tokens}).expand({rows, tokens}).contiguous();
  at::Tensor mask = at::ones({rows, context + tokens}, at::kLong).to(dev);
  auto base = std::make_shared<KVCache>(filled_cache(m, rows, context, tokens));
  return [&m, ids, pos, mask, base, context, tokens] {
    KVCache c = *base;
    c.truncate(context);  // shares the buffers: each run appends over the same spare positions
    return m.forward(ids, pos, mask, c, tokens);
  };
}

// One in-place forward of rows x tokens, each row in its own slot (consecutive: the view that
// serving reads most) after `context` positions; every run writes the same positions.
Op slots_op(const Decoder& m, int64_t rows, int64_t tokens, int64_t context, bool last_only) {
  auto store = std::make_shared<KVStore>(m.new_store(rows, context + tokens));
  std::vector<SlotSpan> spans;
  for (int64_t r = 0; r < rows; ++r) spans.push_back({r, context, tokens, {}});
  const at::Tensor ids = at::zeros({rows, tokens}, at::kLong);
  const Decoder::Logits which = last_only ? Decoder::Logits::Last : Decoder::Logits::All;
  return [&m, store, spans, ids, which] { return m.forward_slots(ids, spans, *store, which); };
}

Op forward_op(const Decoder& m, int64_t rows, int64_t tokens, int64_t context, ForwardPath path, bool last_only) {
  return path == ForwardPath::Slots ? slots_op(m, rows, tokens, context, last_only) : dense_op(m, rows, tokens, context);
}

}  // namespace

double time_forward(const Decoder& m, int64_t rows, int64_t tokens, int64_t context, int reps, ForwardPath path,
                    int threads, bool last_only) {
  const Op op = forward_op(m, rows, tokens, context, path, last_only);
  return fastest(reps, [&] { synced(op, threads); });
}

double overlap_serial_share(const Decoder& target, const Decoder& draft, int64_t rows, int64_t k, int64_t context,
                            int reps, ForwardPath path, ForwardThreads threads) {
  if (on_unparked_initial_thread()) return 1.0;  // every forward will run here, one at a time
  k = std::max<int64_t>(1, k);
  const Op verify_op = forward_op(target, rows, k + 1, context, path, false);
  const Op draft_op = forward_op(draft, rows, 1, context, path, true);
  // Each phase as its role hands it over: the verifier's forward, then the drafter's k forwards.
  auto verify = [&] { synced(verify_op, threads.target); };
  auto drafts = [&] {
    for (int64_t j = 0; j < k; ++j) synced(draft_op, threads.draft);
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

double time_repad(const Decoder& m, int64_t rows, int64_t context, int reps) {
  std::vector<KVCache> seqs;
  for (int64_t r = 0; r < rows; ++r) seqs.push_back(filled_cache(m, 1, context - r % 8, 0));
  std::vector<const KVCache*> ptrs;
  for (const auto& s : seqs) ptrs.push_back(&s);
  return fastest_here(reps, [&] { return KVCache::stack_right_aligned(ptrs, 4).keys(0).narrow(2, 0, 1); });
}

double time_realign(const Decoder& m, int64_t rows, int64_t context, int reps) {
  CacheState s;
  s.cache = filled_cache(m, rows, context, 0);
  // Every other row rejected its last two positions: the holes of a ragged verification.
  at::Tensor mask = at::ones({rows, context}, at::kLong);
  mask.index_put_({at::indexing::Slice(0, at::indexing::None, 2), at::indexing::Slice(context - 2, context)}, 0);
  s.mask = mask.to(m.device());
  return fastest_here(reps, [&] {
    CacheState c = s;
    realign(c, 4);
    return c.cache.keys(0).narrow(2, 0, 1);
  });
}

AgreementSample measure_agreement(const Decoder& target, const Decoder& draft, int64_t rows, int64_t prompt,
                                  int64_t tokens, uint64_t seed) {
  const int64_t vocab = std::min(target.config().vocab_size, draft.config().vocab_size);
  tokens = std::min(tokens, target.config().max_position_embeddings - prompt);
  AgreementSample out;
  if (vocab <= 0 || rows <= 0 || prompt <= 0 || tokens <= 0) return out;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> id(0, vocab - 1);
  std::vector<SeqRequest> reqs(static_cast<size_t>(rows));
  for (SeqRequest& r : reqs) {
    for (int64_t i = 0; i < prompt; ++i) r.prompt.push_back(id(rng));
    r.max_tokens = tokens;
  }
  const std::vector<SeqResult> got = plain_decode(target, reqs, rows);
  for (size_t r = 0; r < reqs.size(); ++r) {
    std::vector<int64_t> seq = reqs[r].prompt;
    seq.insert(seq.end(), got[r].tokens.begin(), got[r].tokens.end());
    const int64_t T = static_cast<int64_t>(seq.size());
    KVCache cache = draft.new_cache(1, T);
    const at::Tensor ids = at::tensor(seq, at::kLong).view({1, T});
    const at::Tensor pos = at::arange(T, at::kLong).view({1, T});
    const at::Tensor mask = at::ones({1, T}, at::kLong).to(draft.device());
    // The draft's prediction at position p - 1 is its guess for token p.
    const at::Tensor guess = draft.forward(ids, pos, mask, cache).argmax(-1).to(at::kCPU).view({T});
    const auto g = guess.accessor<int64_t, 1>();
    for (int64_t p = prompt; p < T; ++p) {
      out.agreed += g[p - 1] == seq[static_cast<size_t>(p)];
      ++out.positions;
    }
  }
  return out;
}

}  // namespace exspec
