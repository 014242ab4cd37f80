#include "model/step_runner.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <stdexcept>

#include "model/decoder.h"
#include "model/kv_store.h"
#include "model/to_device.h"

namespace exspec {
namespace {

class EagerParts : public PartRunner {
 public:
  std::vector<at::Tensor> run(int64_t, int64_t, const Body& body) override { return body(); }
  std::string name() const override { return "eager"; }
};

// The content rows' logits lg [N, V] as forward_slots returns them: each row's last ([B, 1, V]),
// or every position of [B, T] (padding positions zero).
at::Tensor last_rows(const at::Tensor& lg, const SlotForward& f) {
  std::vector<int64_t> rows;
  int64_t before = 0;
  for (int64_t b = 0; b < f.batch(); ++b) {
    rows.push_back(f.content.defined() ? before + f.counts[b] - 1 : b * f.T + f.counts[b] - 1);
    before += f.counts[b];
  }
  return lg.index_select(0, to_device(at::tensor(rows, at::kLong), lg.device())).view({f.batch(), 1, lg.size(-1)});
}

at::Tensor all_rows(const at::Tensor& lg, const SlotForward& f) {
  const int64_t B = f.batch(), T = f.T, V = lg.size(-1);
  if (!f.content.defined()) return lg.view({B, T, V});
  return at::zeros({B * T, V}, lg.options()).index_copy_(0, f.content, lg).view({B, T, V});
}

}  // namespace

std::unique_ptr<PartRunner> eager_parts() { return std::make_unique<EagerParts>(); }

#ifndef EXSPEC_WITH_CUDA  // the CUDA build's are in model/cuda_graphs.cpp
std::unique_ptr<PartRunner> cuda_graph_parts(const at::Device&) {
  throw std::invalid_argument("--cuda-graphs on: this build of exspec has no CUDA (libtorch without it)");
}
bool cuda_graphs_built() { return false; }
void batch_invariant_products(const at::Device&) {}
#endif

RowBuckets row_buckets_from_env() {
  const char* v = std::getenv("EXSPEC_ROW_BUCKETS");
  if (!v || !*v) return RowBuckets::standard();
  RowBuckets b;
  std::stringstream in(v);
  for (std::string part; std::getline(in, part, ',');) {
    size_t used = 0;
    int64_t n = -1;
    try {
      n = std::stoll(part, &used);
    } catch (const std::exception&) {
    }
    if (used != part.size() || n < 1 || (!b.sizes.empty() && n <= b.sizes.back()))
      throw std::invalid_argument(std::string("EXSPEC_ROW_BUCKETS: ascending row counts >= 1, comma-separated; got ") + v);
    b.sizes.push_back(n);
  }
  return b;
}

StepState::StepState(RowBuckets buckets, std::unique_ptr<PartRunner> runner)
    : buckets_(std::move(buckets)), runner_(std::move(runner)) {
  if (buckets_.sizes.empty() || !std::is_sorted(buckets_.sizes.begin(), buckets_.sizes.end()) || buckets_.sizes[0] < 1)
    throw std::invalid_argument("StepState: the row buckets must be ascending and >= 1");
  if (!runner_) runner_ = eager_parts();
}

void StepState::allocate(const Decoder& m) {
  if (ids_.defined()) return;
  const ModelConfig& c = m.config();
  const int64_t R = buckets_.largest();
  const auto f = at::TensorOptions().dtype(m.dtype()).device(m.device());
  ids_ = at::zeros({R}, f.dtype(at::kLong));
  pos_ = at::zeros({R}, f.dtype(at::kLong));
  h_[0] = at::zeros({R, c.hidden_size}, f);
  h_[1] = at::zeros({R, c.hidden_size}, f);
  a_ = at::zeros({R, c.num_heads * c.head_dim}, f);
}

bool Decoder::forward_bucketed(const at::Tensor& ids, const SlotForward& f, KVStore& store, Logits logits,
                               at::Tensor& out) const {
  StepState& st = *store.step();
  const int64_t bucket = st.buckets().bucket(f.content.defined() ? f.content.size(0) : f.batch() * f.T);
  if (bucket == 0) {
    ++st.unbucketed;
    return false;
  }
  out = run_bucketed(ids, f, store, st, bucket, logits);
  return true;
}

at::Tensor Decoder::run_bucketed(const at::Tensor& ids, const SlotForward& f, KVStore& store, StepState& st, int64_t R,
                                 Logits logits) const {
  const int64_t B = f.batch(), T = f.T, N = f.content.defined() ? f.content.size(0) : B * T;
  const int64_t L = config_.num_layers, H = config_.num_heads, Hkv = config_.num_kv_heads, D = config_.head_dim;
  st.allocate(*this);
  ++st.bucketed, st.content_rows += N, st.padding_rows += R - N;
  // The step's inputs into the static buffers: the content rows, then the padding rows (token 0
  // at position 0), whose attention output stays zero.
  at::Tensor tok = ids, pos = f.positions.reshape({B * T});
  if (f.content.defined()) tok = tok.index_select(0, f.content), pos = pos.index_select(0, f.content);
  st.ids_.narrow(0, 0, N).copy_(tok);
  st.pos_.narrow(0, 0, N).copy_(pos);
  if (R > N) {
    st.ids_.narrow(0, N, R - N).zero_();
    st.pos_.narrow(0, N, R - N).zero_();
    st.a_.narrow(0, N, R - N).zero_();
  }
  const at::Tensor ids_r = st.ids_.narrow(0, 0, R), pos_r = st.pos_.narrow(0, 0, R), a_r = st.a_.narrow(0, 0, R);
  const at::Tensor h[2] = {st.h_[0].narrow(0, 0, R), st.h_[1].narrow(0, 0, R)};
  PartRunner& run = st.runner();

  // Part 0: the embedding, the rope tables, layer 0 up to attention. Outputs: the tables (model/rope.h), qk, v.
  const std::vector<at::Tensor> first = run.run(R, 0, [&] {
    h[0].copy_(embed(ids_r));
    const RopeTables rope = rope_tables(pos_r.view({1, R}));
    auto [qk, v] = pre_attention(layers_[0], h[0], rope, 1, R);
    return std::vector<at::Tensor>{rope.cos, rope.sin, rope.local_cos, rope.local_sin, qk, v};
  });
  const RopeTables rope{first[0], first[1], first[2], first[3]};
  at::Tensor qk = first[4], v = first[5];
  const KVStep kv([&](int64_t i, const at::Tensor& k, const at::Tensor& vv) { return store.write_read(i, f, k, vv); }, &store,
                  &f);
  const AttentionMasks masks = slot_masks(f);
  for (int64_t i = 0; i < L; ++i) {
    // Attention over the content rows alone ([B, T] as the plain forward lays them out).
    at::Tensor qk_n = qk.narrow(1, 0, N), v_n = v.narrow(1, 0, N);
    if (!f.content.defined()) qk_n = qk_n.reshape({B, T, H + Hkv, D}), v_n = v_n.reshape({B, T, Hkv, D});
    st.a_.narrow(0, 0, N).copy_(attend(i, qk_n, v_n, masks.of(layers_[i].kind.window), kv, f.content, B, T));
    // Part i + 1: the rest of layer i, from h[i % 2] into h[(i + 1) % 2] (its input stays as it
    // was, so the part may run twice: a graph's warm-up, then its capture), then layer i + 1
    // up to attention.
    const at::Tensor &in = h[i % 2], &out = h[(i + 1) % 2];
    const std::vector<at::Tensor> next = run.run(R, i + 1, [&] {
      post_attention(layers_[i], out.copy_(in), a_r);
      if (i + 1 == L) return std::vector<at::Tensor>{};
      auto [q2, v2] = pre_attention(layers_[i + 1], out, rope, 1, R);
      return std::vector<at::Tensor>{q2, v2};
    });
    if (i + 1 < L) qk = next[0], v = next[1];
  }
  if (logits == Logits::None) return {};
  // Part L + 1: the final norm and the head over every row, then the rows asked for.
  const at::Tensor& last = h[L % 2];
  at::Tensor lg = run.run(R, L + 1, [&] {
    return std::vector<at::Tensor>{head(final_norm(last))};
  })[0].narrow(0, 0, N);
  return logits == Logits::Last ? last_rows(lg, f) : all_rows(lg, f);
}

void warm_up_buckets(const Decoder& m, KVStore& store) {
  c10::NoGradGuard no_grad;
  StepState* st = store.step();
  if (!st) return;
  std::vector<int64_t> sizes = st->buckets().sizes;
  const int64_t slots = store.slots(), room = store.capacity();
  for (auto it = sizes.rbegin(); it != sizes.rend(); ++it) {  // largest first: its pool serves the smaller ones
    // R rows spread over the slots, one run of tokens each, at their first positions.
    const int64_t R = *it, rows = std::min(R, slots), T = (R + rows - 1) / rows;
    if (T > room) continue;
    std::vector<SlotSpan> spans;
    for (int64_t r = 0, left = R; r < rows && left > 0; ++r, left -= T) spans.push_back({r, 0, std::min(T, left), {}});
    const int64_t B = static_cast<int64_t>(spans.size());
    m.forward_slots(at::zeros({B, T}, at::kLong), spans, store, Decoder::Logits::All);
  }
}

}  // namespace exspec
