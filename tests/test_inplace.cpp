// The in-place mode (issue 18): the store checked row by row against each row recomputed alone,
// and the float64 oracle (batch-1 nonspec greedy decoding, token for token) for every batch size,
// K (fixed, auto, random), EOS and max_tokens mid-batch, sequences joining a running batch,
// chunked prefill of long prompts, a full store, cancellation and slot moves: the Scheduler's
// jobs through the step function (run_job, driven by actors/sequential_driver.h), as the server
// runs them.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <map>
#include <mutex>

#include "actors/scheduler/engine_config.h"
#include "actors/sequential_driver.h"
#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/oracle/plain_decode.h"
#include "model/inplace.h"
#include "actors/scheduler/slot_table.h"
#include "model/runtime.h"
#include "tests/engine_configs.h"
#include "tests/mode_sweep.h"
#include "tests/random_draft_length.h"
#include "tests/support.h"

using namespace exspec;

namespace {

using test::load64;

using test::truncated_draft;

using test::alone_kv;

// The slot's first `n` positions (in its blocks) equal the first `n` tokens of the sequence
// recomputed alone. Keys carry rope: equal keys also prove the positions were the row's own.
void check_slot(const Decoder& m, const KVStore& store, const SlotRow& s, int64_t n,
                const std::vector<int64_t>& blocks = {}) {
  if (n == 0) return;
  auto want = alone_kv(m, std::vector<int64_t>(s.tokens.begin(), s.tokens.begin() + n));
  for (int64_t l = 0; l < store.num_layers(); ++l) {
    at::Tensor got = at::cat({store.keys(l, s.slot, n, blocks), store.values(l, s.slot, n, blocks)}, -1).to(at::kCPU);
    CATCH_REQUIRE(got.sizes() == want[l].sizes());
    CATCH_CHECK((got - want[l]).abs().max().item<double>() < 1e-9);
  }
}

using test::inplace_config;  // B, slots, a fixed K, prompt tokens a chunk

std::vector<SeqRequest> requests_of(const std::vector<std::vector<int64_t>>& prompts, int64_t max_tokens,
                                    std::vector<int64_t> eos = {}) {
  std::vector<SeqRequest> r;
  for (const auto& p : prompts) r.push_back(SeqRequest{p, max_tokens, eos});
  return r;
}

}  // namespace

CATCH_TEST_CASE("in place: each row's keys and values in the store equal the row recomputed alone", "[inplace]") {
  auto target = load64(test::model_dir("llama"));
  auto draft = load64(truncated_draft());
  KVStore ts = target->new_store(6, 80), ds = draft->new_store(6, 80);
  SlotTable slots(6);
  ModelSet m{target.get(), &ts, draft.get(), &ds};
  auto prompts = test::mixed_prompts(6, 1, 14, target->config().vocab_size, 17);
  std::vector<SlotRow> seqs;
  auto join = [&](const std::vector<int64_t>& prompt) {
    SlotRow s;  // both counters 0: whatever an earlier sequence left in the slot is not content
    s.slot = slots.acquire();
    s.tokens = prompt;
    seqs.push_back(s);
  };
  for (int i = 0; i < 4; ++i) join(prompts[i]);
  auto check_all = [&] {
    for (const SlotRow& s : seqs) {
      check_slot(*target, ts, s, s.target_len);
      check_slot(*draft, ds, s, s.draft_len);
      CATCH_CHECK(s.draft_len <= s.target_len);
    }
  };
  auto prefill_all = [&](int64_t budget) {
    for (int guard = 0; guard < 100; ++guard) {
      std::vector<SlotRow*> rows;
      for (auto& s : seqs) rows.push_back(&s);
      if (prefill_chunk(m, rows, budget) == 0) break;
      check_all();  // mid-prompt too: a chunk lands at each row's own offset
    }
    for (auto& s : seqs) CATCH_CHECK(s.prefill_remaining() == 0);
  };
  prefill_all(5);
  bool ragged = false, gathered = false, deep_lag = false;
  const int64_t ks[] = {1, 2, 3, 0, 0, 2, 1, 3, 0, 0, 0, 3, 2, 1};
  for (int step = 0; step < 14; ++step) {
    if (step == 4) {  // a sequence leaves, another joins its slot mid-run and is prefilled in chunks
      slots.release(seqs[1].slot);  // its stale contents stay, and are overwritten
      seqs.erase(seqs.begin() + 1);
      join(prompts[4]);
      join(prompts[5]);
      prefill_all(4);
    }
    // Odd steps decode a non-consecutive subset (the gathered read), even steps every row.
    std::vector<SlotRow*> rows;
    for (size_t i = 0; i < seqs.size(); ++i)
      if (step % 2 == 0 || i % 2 == 0) rows.push_back(&seqs[i]);
    std::vector<const SlotRow*> crows(rows.begin(), rows.end());
    for (size_t i = 1; i < rows.size(); ++i) gathered |= rows[i]->slot != rows[i - 1]->slot + 1;
    for (const SlotRow* s : crows) deep_lag |= s->draft_lag() > 1;
    const int64_t K = ks[step];
    at::Tensor drafts = draft_inplace(m, crows, K);
    VerifyResult v = verify_inplace(m, crows, drafts);
    commit_inplace(rows, v, K);
    ragged |= v.accepted.min().item<int64_t>() != v.accepted.max().item<int64_t>();
    // The counters are the truth (the stores keep none): check_all reads what they say.
    for (const SlotRow& s : seqs) CATCH_CHECK(s.target_len == s.before_pending());
    check_all();
  }
  CATCH_CHECK(ragged);    // rows really advanced by different counts
  CATCH_CHECK(gathered);  // and a batch of non-consecutive slots ran
  CATCH_CHECK(deep_lag);  // and the draft caught up more than one token in a forward
}

CATCH_TEST_CASE("in place: a forward over right-padded rows gives each row its own logits, padding not computed",
                "[inplace]") {
  // The products run on the content positions only (packed); attention alone sees the padding.
  auto target = load64(test::model_dir("llama"));
  const auto prompts = test::mixed_prompts(3, 2, 12, target->config().vocab_size, 5);
  std::vector<int64_t> counts, slots{2, 0, 1};  // not in slot order: the keys are gathered
  std::vector<SlotSpan> spans;
  int64_t T = 0;
  for (size_t b = 0; b < prompts.size(); ++b) {
    counts.push_back(static_cast<int64_t>(prompts[b].size())), T = std::max(T, counts.back());
    spans.push_back(SlotSpan{slots[b], 0, counts.back(), {}});
  }
  std::vector<int64_t> ids(3 * T, 0);
  for (size_t b = 0; b < 3; ++b) std::copy(prompts[b].begin(), prompts[b].end(), ids.begin() + b * T);
  CATCH_REQUIRE(*std::min_element(counts.begin(), counts.end()) < T);  // some row is padded
  for (Decoder::Logits kind : {Decoder::Logits::All, Decoder::Logits::Last}) {
    KVStore store = target->new_store(3, 16);
    at::Tensor got = target->forward_slots(at::tensor(ids, at::kLong).view({3, T}), spans, store, kind);
    for (size_t b = 0; b < 3; ++b) {
      const int64_t n = counts[b];
      KVCache c = new_dense_cache(*target, 1);
      at::Tensor want = dense_forward(*target, at::tensor(prompts[b], at::kLong).view({1, n}),
                                      at::arange(n, at::kLong).view({1, n}), at::ones({1, n}, at::kLong), c)[0];
      at::Tensor row = kind == Decoder::Logits::All ? got[b].narrow(0, 0, n) : got[b];
      if (kind == Decoder::Logits::Last) want = want.narrow(0, n - 1, 1);
      CATCH_CHECK((row - want).abs().max().item<double>() < 1e-9);
      check_slot(*target, store, SlotRow{slots[b], prompts[b]}, n);
    }
  }
}

CATCH_TEST_CASE("in place: the store refuses what does not fit", "[inplace]") {
  auto target = load64(test::model_dir("llama"));
  KVStore ts = target->new_store(2, 8);
  SlotTable slots(2);
  CATCH_CHECK(slots.acquire() == 0);
  CATCH_CHECK(slots.acquire() == 1);
  CATCH_CHECK(slots.acquire() == -1);  // full: admission waits
  CATCH_CHECK(slots.full());
  slots.release(0);
  CATCH_CHECK(slots.acquire() == 0);  // the lowest free slot again
  slots.release(0);
  CATCH_CHECK_THROWS_AS(slots.release(0), std::logic_error);  // a slot is released once
  ModelSet m{target.get(), &ts};
  SlotRow s{1, std::vector<int64_t>(12, 5)};  // 11 tokens to store in a slot of 8
  CATCH_CHECK_THROWS_AS(prefill_chunk(m, {&s}, 64), std::length_error);
  CATCH_CHECK(s.target_len == 0);  // nothing was counted
  CATCH_CHECK(prefill_chunk(m, {&s}, 8) == 8);  // in chunks it fills the slot exactly
  CATCH_CHECK(s.target_len == 8);
  CATCH_CHECK_THROWS_AS(prefill_chunk(m, {&s}, 8), std::length_error);
  CATCH_CHECK(s.target_len == 8);
}

namespace {

struct DraftCase {
  const char* name;
  std::shared_ptr<const Decoder> model;  // null: plain target steps in place
};

// Every batch size and K (fixed, auto, random per step) with each draft yields exactly the
// tokens of batch-1 nonspec greedy decoding, finish reasons included; half of the runs have
// sequences joining a running batch, the prompts are prefilled in chunks of 5 or 64, and the
// stores' blocks hold 1 to 4 positions (16 at B 16).
void oracle_sweep(const std::shared_ptr<const Decoder>& target, const std::vector<DraftCase>& drafts) {
  const auto [reqs, want] = test::stopping_requests(*target);

  for (const auto& d : drafts) {
    for (int64_t B : {1, 2, 3, 8, 16}) {
      for (int64_t K : {1, 3, 5, -1, -2}) {
        if (!d.model && K != 1) continue;
        EngineConfig c;
        c.mode = Mode::InPlace;
        c.batch_size = B;
        c.slots = B + (B % 3) * 2;  // slots >= B, sometimes == B
        c.prefill_chunk = (B + K) % 2 ? 5 : 64;
        // Blocks of 1 to 4 positions split prompts and drafts mid-way (16, the default, at B 16).
        c.block_size = B == 16 ? 16 : (B + K + 8) % 4 + 1;
        c.draft_tokens = std::max<int64_t>(K, 1);
        c.adaptive_k = K < 0;
        SequentialDriver engine(target, d.model, c);
        if (K == -2) engine.set_policy(std::make_shared<test::RandomDraftLength>(B * 31 + 7, 5));
        Timeline t;
        if ((B + K) % 3 != 0)  // every fourth request joins later, while others decode
          for (size_t i = 0; i < reqs.size(); ++i) t.arrive_at.push_back(i % 4 == 3 ? static_cast<int64_t>(2 * i) : 0);
        auto got = engine.run(reqs, t);
        CATCH_INFO("draft " << d.name << ", B " << B << ", K " << K << ", block " << c.block_size);
        for (size_t i = 0; i < reqs.size(); ++i) {
          CATCH_CHECK(got[i].tokens == want[i].tokens);
          CATCH_CHECK(got[i].finish == want[i].finish);
        }
        CATCH_CHECK(engine.trace().max_active <= static_cast<size_t>(c.slots));
        if (!d.model) CATCH_CHECK(engine.stats().drafted == 0);
        if (K == -2 && d.model) {  // the random policy really mixed K = 0 and K > 0
          CATCH_CHECK(engine.stats().k_steps.size() > 1);
          CATCH_CHECK(engine.stats().k_steps.at(0) > 0);
        }
      }
    }
  }
}

}  // namespace

CATCH_TEST_CASE("in place equals batch-1 nonspec greedy in float64 (the oracle)", "[inplace][oracle]") {
  auto target = load64(test::model_dir("llama"));
  oracle_sweep(target, {{"none (plain steps)", nullptr},
                        {"identical", target},
                        {"layer-truncated", load64(truncated_draft())},
                        {"unrelated", load64(test::model_dir("llama", "tiny", 77))}});
}

// int8 and bfloat16 (issue 47): each dtype's own batch-1 nonspec decoding is the oracle.
CATCH_TEST_CASE("in place equals batch-1 nonspec greedy in float32, int8 and bfloat16 (each its own oracle)", "[inplace][oracle][int8]") {
  for (at::ScalarType dt : test::invariant_dtypes()) {
    CATCH_INFO(dtype_name(dt));
    auto target = test::load_as(test::model_dir("llama"), dt);
    oracle_sweep(target, {{"none (plain steps)", nullptr}, {"layer-truncated", test::load_as(truncated_draft(), dt)}});
  }
}

// GGUF's Q4_K and Q6_K blocks (issue 57) on their own kernel: each file's own batch-1 nonspec
// decoding is the oracle.
CATCH_TEST_CASE("in place equals batch-1 nonspec greedy on Q4_K and Q6_K GGUFs (each its own oracle)",
                "[inplace][oracle][int8][kquant]") {
  for (const char* type : {"q4_k", "q6_k"}) {
    CATCH_INFO(type);
    auto target = test::load_as(test::kquant_gguf(type), at::kChar);
    oracle_sweep(target, {{"none (plain steps)", nullptr}, {"layer-truncated", test::load_as(test::kquant_gguf(type, true), at::kChar)}});
  }
}

// Issue 62: a draft whose head multiplies only a shortlist proposes only from it; the target
// still chooses from its whole vocabulary, so the tokens stay plain decoding's. Half the tokens
// the target emits on the sweep's requests (most of its choices), and one token (almost none).
CATCH_TEST_CASE("in place with a draft head over a shortlist equals batch-1 nonspec greedy (float64, int8, Q4_K_M)",
                "[inplace][oracle][shortlist]") {
  auto target = load64(test::model_dir("llama"));
  const int64_t vocab = target->config().vocab_size;
  const auto half = test::frequent_tokens(test::stopping_requests(*target).want, 0.5, vocab);
  oracle_sweep(target, {{"layer-truncated, half the emitted tokens", test::load_shortlisted(truncated_draft(), at::kDouble, test::device(), half)},
                        {"layer-truncated, one token", test::load_shortlisted(truncated_draft(), at::kDouble, test::device(), {0})}});
  if (!test::device().is_cpu()) return;
  auto t8 = test::load_as(test::model_dir("llama"), at::kChar);
  oracle_sweep(t8, {{"int8, half the emitted tokens",
                     test::load_shortlisted(truncated_draft(), at::kChar, at::kCPU, test::frequent_tokens(test::stopping_requests(*t8).want, 0.5, vocab))}});
  auto tq = test::load_as(test::kquant_gguf("q4_k_m"), at::kChar);
  oracle_sweep(tq, {{"Q4_K_M, half the emitted tokens",
                     test::load_shortlisted(test::kquant_gguf("q4_k_m", true), at::kChar, at::kCPU,
                                            test::frequent_tokens(test::stopping_requests(*tq).want, 0.5, tq->config().vocab_size))}});
}

// Issue 62: a draft head read in 4 bits proposes what the screen and the int8 head choose
// together, from 4 candidates or from 1 (the screen's own choice, scored again); a Q4_K_M draft's
// Q6_K head scores its candidates on the K-quant kernel.
CATCH_TEST_CASE("in place with a screened draft head equals batch-1 nonspec greedy (int8, Q4_K_M)", "[inplace][oracle][screen]") {
  if (!test::device().is_cpu()) return;
  oracle_sweep(test::load_as(test::model_dir("llama"), at::kChar),
               {{"int8, 4 candidates", test::load_screened(truncated_draft(), 4)}, {"int8, 1 candidate", test::load_screened(truncated_draft(), 1)}});
  oracle_sweep(test::load_as(test::kquant_gguf("q4_k_m"), at::kChar),
               {{"Q4_K_M, 4 candidates", test::load_screened(test::kquant_gguf("q4_k_m", true), 4)}});
}

CATCH_TEST_CASE("in place equals batch-1 nonspec greedy on a GLM-4 pair (the oracle)", "[inplace][oracle][glm]") {
  auto target = load64(test::model_dir("glm4"));
  oracle_sweep(target, {{"layer-truncated", load64(truncated_draft("glm4"))},
                        {"unrelated", load64(test::model_dir("glm4", "tiny", 77))}});
}

// The sweep the paper's modes go through (tests/paper/test_speculative.cpp), in place: every
// batch size and K with each draft, every output the oracle's, each draft's acceptance in its
// range at a fixed K.
CATCH_TEST_CASE("in place, swept as the paper's modes, equals batch-1 nonspec greedy in float64 (the oracle)",
                "[inplace][oracle]") {
  auto target = load64(test::model_dir("llama"));
  test::mode_sweep(target, {{"identical", target, 1.0, 1.0},
                             {"layer-truncated", load64(truncated_draft()), 0.2, 0.97},
                             {"unrelated", load64(test::model_dir("llama", "tiny", 77)), 0.0, 0.2}},
                   {Mode::InPlace});
}

CATCH_TEST_CASE("in place, swept as the paper's modes, equals batch-1 nonspec greedy on a GLM-4 pair (the oracle)",
                "[inplace][oracle][glm]") {
  auto target = load64(test::model_dir("glm4"));
  test::mode_sweep(target, {{"identical", target, 1.0, 1.0},
                             {"layer-truncated", load64(truncated_draft("glm4")), 0.2, 0.97},
                             {"unrelated", load64(test::model_dir("glm4", "tiny", 77)), 0.0, 0.2}},
                   {Mode::InPlace});
}

// Issue 72: Qwen3-MoE, its layers of experts (8, 2 a row): a row's experts are chosen by its own
// logits and summed in one order, so a verification of K + 1 rows gives each row plain decoding's
// token, with a draft of its own kind and a dense Qwen3 draft.
CATCH_TEST_CASE("in place equals batch-1 nonspec greedy on a Qwen3-MoE pair (the oracle)", "[inplace][oracle][moe]") {
  auto target = load64(test::model_dir("qwen3moe"));
  oracle_sweep(target, {{"layer-truncated", load64(truncated_draft("qwen3moe"))},
                        {"dense qwen3", load64(truncated_draft("qwen3"))}});
}

CATCH_TEST_CASE("in place: a long prompt joining running sequences is prefilled in chunks between their steps",
                "[inplace][oracle][chunked]") {
  auto target = load64(test::model_dir("llama"));
  auto draft = load64(truncated_draft());
  auto prompts = test::mixed_prompts(8, 2, 9, target->config().vocab_size, 41);
  prompts.push_back(test::mixed_prompts(1, 300, 300, target->config().vocab_size, 43)[0]);
  auto reqs = requests_of(prompts, 40);
  reqs.back().max_tokens = 12;
  auto want = plain_decode(*target, reqs, 1);
  SequentialDriver engine(target, draft, inplace_config(8, 9, 3, 32));
  Timeline t;
  t.arrive_at.assign(reqs.size(), 0);
  t.arrive_at.back() = 6;  // the long prompt arrives while the eight decode
  auto got = engine.run(reqs, t);
  for (size_t i = 0; i < reqs.size(); ++i) CATCH_CHECK(got[i].tokens == want[i].tokens);
  // 299 prompt tokens in chunks of 32: ten forwards, a decode step of the eight between two.
  CATCH_CHECK(engine.trace().prefills >= 10 + 1);
  CATCH_CHECK(engine.trace().steps_between_prefills >= 9);
}

CATCH_TEST_CASE("in place without a draft: requests arriving while others decode join their steps", "[inplace][oracle]") {
  auto target = load64(test::model_dir("llama"));
  auto reqs = requests_of(test::mixed_prompts(4, 3, 9, target->config().vocab_size, 53), 24);
  auto want = plain_decode(*target, reqs, 1);
  EngineConfig c = inplace_config(4, 4, 1, 64);
  SequentialDriver engine(target, nullptr, c);
  Timeline t;
  t.arrive_at = {0, 6, 12, 18};  // one after another, each while the earlier ones decode
  auto got = engine.run(reqs, t);
  for (size_t i = 0; i < reqs.size(); ++i) CATCH_CHECK(got[i].tokens == want[i].tokens);
  const RunStats& st = engine.stats();
  CATCH_CHECK(st.drafted == 0);
  // 96 tokens: alone, each a step of one row (96 steps); joined, steps carry several rows.
  CATCH_CHECK(st.committed == 96);
  CATCH_CHECK(st.row_verifications == 96);
  CATCH_CHECK(st.steps < 96 - 24);
}

CATCH_TEST_CASE("in place: rows left apart by ragged finishes move into consecutive slots, output unchanged",
                "[inplace][oracle][slots]") {
  auto target = load64(test::model_dir("llama"));
  auto draft = load64(truncated_draft());
  auto reqs = requests_of(test::mixed_prompts(12, 2, 12, target->config().vocab_size, 59), 0);
  for (size_t i = 0; i < reqs.size(); ++i) reqs[i].max_tokens = static_cast<int64_t>(3 + (i * 7) % 17);  // ragged
  auto want = plain_decode(*target, reqs, 1);
  for (const std::shared_ptr<const Decoder>& d : {draft, std::shared_ptr<const Decoder>()}) {
    RunStats with, without;
    for (bool moves : {true, false}) {
      EngineConfig c = inplace_config(6, 8, 2, 16);
      c.slot_moves = moves;
      SequentialDriver engine(target, d, c);
      Timeline t;
      for (size_t i = 0; i < reqs.size(); ++i) t.arrive_at.push_back(i < 8 ? 0 : static_cast<int64_t>(3 * i));
      auto got = engine.run(reqs, t);
      CATCH_INFO("draft " << (d ? "truncated" : "none") << ", slot moves " << moves);
      for (size_t i = 0; i < reqs.size(); ++i) CATCH_CHECK(got[i].tokens == want[i].tokens);
      (moves ? with : without) = engine.stats();
    }
    CATCH_CHECK(without.gathered_steps > 0);  // the finishes did scatter the rows
    CATCH_CHECK(with.slot_moves > 0);
    CATCH_CHECK(with.gathered_steps < without.gathered_steps);
  }
}

CATCH_TEST_CASE("in place: a full store makes sequences wait, cancelled ones free their slot", "[inplace][oracle][cancel]") {
  auto target = load64(test::model_dir("llama"));
  auto draft = load64(truncated_draft());
  auto prompts = test::mixed_prompts(10, 1, 16, target->config().vocab_size, 47);
  auto reqs = requests_of(prompts, 20);
  auto want = plain_decode(*target, reqs, 1);
  SequentialDriver engine(target, draft, inplace_config(3, 4, 2, 6));
  Timeline ev;
  ev.cancel_at[1] = 12;  // live, mid-decode
  ev.cancel_at[8] = 4;   // still waiting for a slot
  auto got = engine.run(reqs, ev);
  for (size_t i = 0; i < reqs.size(); ++i) {
    CATCH_INFO("request " << i);
    if (ev.cancel_at.count(i)) {
      CATCH_CHECK(got[i].finish == FinishReason::None);
      CATCH_CHECK(got[i].tokens.size() < want[i].tokens.size());
      CATCH_CHECK(std::equal(got[i].tokens.begin(), got[i].tokens.end(), want[i].tokens.begin()));
    } else {
      CATCH_CHECK(got[i].tokens == want[i].tokens);
      CATCH_CHECK(got[i].finish == want[i].finish);
    }
  }
  CATCH_CHECK(got[1].tokens.size() > 0);  // it was decoding when it went away
  CATCH_CHECK(got[8].tokens.empty());
  CATCH_CHECK(engine.trace().max_active == 4);  // 9 sequences through 4 slots: each slot reused
  CATCH_CHECK(engine.trace().max_waiting >= 6);
}
