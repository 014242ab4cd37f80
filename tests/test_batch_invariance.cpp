// A row's logits do not depend on its batch (issues 47 and 69), in float32, int8 and bfloat16
// on every instruction set (EXSPEC_ISA): the logits of one sequence fed a token a forward alone equal, bit for bit,
// the same positions computed in a prefill chunk, inside in-place batches of 2 to 16 rows (at any
// place, in scattered slots, beside rows of other lengths fed other chunk sizes), with blocks of
// the store read as a view or gathered, and inside the paper modes' left-padded batches.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <string>
#include <vector>

#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/oracle/kv_cache.h"
#include "model/kv_store.h"
#include "tests/support.h"

using namespace exspec;

namespace {

at::Tensor ids_of(const std::vector<int64_t>& v) { return at::tensor(v, at::kLong); }

// Logits [L, vocab] of each position of `tokens`, one token a forward, alone in slot 0.
at::Tensor alone(const Decoder& m, const std::vector<int64_t>& tokens) {
  KVStore st = m.new_store(1, static_cast<int64_t>(tokens.size()));
  std::vector<at::Tensor> rows;
  for (size_t i = 0; i < tokens.size(); ++i)
    rows.push_back(m.forward_slots(ids_of({tokens[i]}).view({1, 1}), {SlotSpan{0, static_cast<int64_t>(i), 1, {}}}, st,
                                   Decoder::Logits::Last)[0][0]);
  return at::stack(rows);
}

bool same(const at::Tensor& a, const at::Tensor& b) { return a.sizes() == b.sizes() && at::equal(a, b); }

// B rows in scattered slots of a store with blocks of `block` positions; row `watch` is `tokens`,
// the others other prompts. Each forward feeds every unfinished row a chunk of its own size
// (row r: 1 + (r + step) % 4 tokens, the watched row's varying too). Returns the watched row's
// logits at each position.
at::Tensor in_batch(const Decoder& m, const std::vector<int64_t>& tokens, int64_t B, int64_t watch, int64_t block,
                    bool borrowed) {
  auto prompts = test::mixed_prompts(static_cast<int>(B), 3, 24, m.config().vocab_size, 1000 + static_cast<uint64_t>(B));
  prompts[watch] = tokens;
  const int64_t cap = 32;
  KVStore st = m.new_store(2 * B + 1, cap, block);
  std::vector<int64_t> slot(B), fed(B, 0);
  for (int64_t r = 0; r < B; ++r) slot[r] = (2 * r + 1) % (2 * B + 1);
  std::vector<int64_t> elsewhere;  // borrowed: the watched row's blocks lie in the last slot's row, its keys gathered
  if (borrowed)
    for (int64_t i = 0; i < cap / block; ++i) elsewhere.push_back((2 * B) * (cap / block) + i);
  std::vector<at::Tensor> got(tokens.size());
  for (int64_t step = 0;; ++step) {
    std::vector<int64_t> rows, counts;
    std::vector<SlotSpan> spans;
    for (int64_t r = 0; r < B; ++r)
      if (fed[r] < static_cast<int64_t>(prompts[r].size())) rows.push_back(r);
    if (rows.empty()) break;
    int64_t T = 0;
    for (int64_t r : rows) {
      counts.push_back(std::min<int64_t>(1 + (r + step) % 4, static_cast<int64_t>(prompts[r].size()) - fed[r]));
      spans.push_back(SlotSpan{slot[r], fed[r], counts.back(), r == watch ? elsewhere : std::vector<int64_t>{}});
      T = std::max(T, counts.back());
    }
    std::vector<int64_t> ids(rows.size() * T, 0);
    for (size_t i = 0; i < rows.size(); ++i)
      for (int64_t t = 0; t < counts[i]; ++t) ids[i * T + t] = prompts[rows[i]][fed[rows[i]] + t];
    at::Tensor logits = m.forward_slots(ids_of(ids).view({static_cast<int64_t>(rows.size()), T}), spans, st,
                                        Decoder::Logits::All);
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] == watch)
        for (int64_t t = 0; t < counts[i]; ++t) got[fed[watch] + t] = logits[i][t];
      fed[rows[i]] += counts[i];
    }
  }
  return at::stack(got);
}

// The paper modes' rectangular batch: B left-padded prompts in one forward, row `watch` is
// `tokens` but its last; then one decode step for every row. The watched row's logits.
at::Tensor left_padded(const Decoder& m, const std::vector<int64_t>& tokens, int64_t B, int64_t watch) {
  auto prompts = test::mixed_prompts(static_cast<int>(B), 2, 20, m.config().vocab_size, 2000 + static_cast<uint64_t>(B));
  prompts[watch] = std::vector<int64_t>(tokens.begin(), tokens.end() - 1);
  int64_t T = 0;
  for (const auto& p : prompts) T = std::max<int64_t>(T, static_cast<int64_t>(p.size()));
  std::vector<int64_t> ids(B * T, 0), pos(B * T, 0), mask(B * T, 0);
  for (int64_t r = 0; r < B; ++r) {
    const int64_t pad = T - static_cast<int64_t>(prompts[r].size());
    for (int64_t t = pad; t < T; ++t) ids[r * T + t] = prompts[r][t - pad], pos[r * T + t] = t - pad, mask[r * T + t] = 1;
  }
  KVCache cache = new_dense_cache(m, B);
  at::Tensor first =
      dense_forward(m, ids_of(ids).view({B, T}), ids_of(pos).view({B, T}), ids_of(mask).view({B, T}), cache);
  const int64_t n = static_cast<int64_t>(prompts[watch].size());
  std::vector<int64_t> next(B, 7), next_pos(B);
  for (int64_t r = 0; r < B; ++r) next_pos[r] = static_cast<int64_t>(prompts[r].size());
  next[watch] = tokens.back();
  at::Tensor m2 = ids_of(mask).view({B, T});
  m2 = at::cat({m2, at::ones({B, 1}, at::kLong)}, 1);
  at::Tensor second = dense_forward(m, ids_of(next).view({B, 1}), ids_of(next_pos).view({B, 1}), m2, cache);
  return at::cat({first[watch].narrow(0, T - n, n), second[watch]});
}

}  // namespace

CATCH_TEST_CASE("a row's logits are the same bits alone, in a prefill chunk and inside any batch",
                "[invariance][int8]") {
  for (const char* arch : {"llama", "qwen3", "glm4", "mistral", "gemma2", "gemma3", "qwen3moe"}) {
    for (at::ScalarType dt : test::invariant_dtypes()) {
      auto m = test::load_as(test::model_dir(arch), dt);
      const auto tokens = test::mixed_prompts(1, 17, 17, m->config().vocab_size, 5)[0];
      const at::Tensor want = alone(*m, tokens);
      CATCH_INFO(arch << ", " << (dt == at::kChar ? "int8" : c10::toString(dt)));
      {  // the whole sequence as one prefill chunk
        KVStore st = m->new_store(1, 17);
        const int64_t L = static_cast<int64_t>(tokens.size());
        CATCH_CHECK(same(m->forward_slots(ids_of(tokens).view({1, L}), {SlotSpan{0, 0, L, {}}}, st, Decoder::Logits::All)[0], want));
      }
      for (int64_t B : {2, 3, 8, 16})
        for (int64_t watch : {int64_t{0}, B - 1, B / 2}) {
          CATCH_INFO("in place, B " << B << ", row " << watch);
          CATCH_CHECK(same(in_batch(*m, tokens, B, watch, 4, false), want));
          CATCH_CHECK(same(in_batch(*m, tokens, B, watch, 4, true), want));
          CATCH_CHECK(same(left_padded(*m, tokens, B, watch), want));
        }
      // The forwards on a team of two threads (the server's initial thread on this machine),
      // the reference on one: each output is computed whole by one thread.
      const int threads = at::get_num_threads();
      at::set_num_threads(2);
      CATCH_CHECK(same(in_batch(*m, tokens, 8, 3, 4, false), want));
      CATCH_CHECK(same(left_padded(*m, tokens, 5, 2), want));
      at::set_num_threads(threads);
    }
  }
}
