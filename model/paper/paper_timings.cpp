#include "model/paper/paper_timings.h"

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/paper/spec_batch.h"

namespace exspec {
namespace {

// A cache of `context` zero positions (finite values: the timing must not hit NaN paths).
KVCache filled_cache(const Decoder& m, int64_t rows, int64_t context, int64_t spare) {
  KVCache c = new_dense_cache(m, rows, context + spare);
  c.reserve(context);
  for (int64_t l = 0; l < c.num_layers(); ++l) {
    const at::Tensor k = c.keys(l);
    at::Tensor z = at::zeros({rows, k.size(1), context, k.size(3)}, k.options());
    c.append(l, z, z);
  }
  c.advance(context);
  return c;
}

// A copy of the paper's realigner runs on its own thread (here: this one), not handed over.
double fastest_here(int reps, const std::function<at::Tensor()>& op) {
  return fastest(reps, [&] { op().sum().item<double>(); });
}

}  // namespace

// The paper's modes take logits at every new position of a forward: last_only changes nothing.
ForwardRun dense_forward_run(const Decoder& m, int64_t rows, int64_t tokens, int64_t context, bool /*last_only*/) {
  const at::Device dev = m.device();
  at::Tensor ids = at::zeros({rows, tokens}, at::kLong);
  at::Tensor pos = (context + at::arange(tokens, at::kLong)).view({1, tokens}).expand({rows, tokens}).contiguous();
  at::Tensor mask = at::ones({rows, context + tokens}, at::kLong).to(dev);
  auto base = std::make_shared<KVCache>(filled_cache(m, rows, context, tokens));
  return [&m, ids, pos, mask, base, context, tokens] {
    KVCache c = *base;
    c.truncate(context);  // shares the buffers: each run appends over the same spare positions
    dense_forward(m, ids, pos, mask, c, tokens).sum().item<double>();
  };
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

}  // namespace exspec
