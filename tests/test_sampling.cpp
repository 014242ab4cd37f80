// Sampling: the sampler's distribution (chi-square over thousands of seeds), the float64 oracle
// extended to sampling (every mode, batch size and K equals batch-1 nonspec sampling with the
// same seed, token for token) and logprobs against an independent forward pass.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <map>

#include "actors/jobs/calibration.h"
#include "actors/collector.h"
#include "actors/sequential_driver.h"
#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/oracle/plain_decode.h"
#include "model/runtime.h"
#include "model/sampling.h"
#include "model/tools/make_model.h"
#include "tests/support.h"

using namespace exspec;

namespace {

using test::load64;

const std::string& truncated_draft() {
  static const std::string dir = [] {
    std::string d = test::scratch_dir() + "/sampling-draft1";
    make_draft(test::model_dir("llama"), 1, d);
    return d;
  }();
  return dir;
}

// The logits of every position of `tokens`, one plain forward without cache reuse: [T, V] float64.
at::Tensor all_logits(const Decoder& m, const std::vector<int64_t>& tokens) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  KVCache c = new_dense_cache(m, 1);
  at::Tensor ids = at::tensor(tokens, at::kLong).view({1, T}).to(m.device());
  at::Tensor pos = at::arange(T, at::kLong).view({1, T}).to(m.device());
  return dense_forward(m, ids, pos, at::ones({1, T}, at::kLong).to(m.device()), c, -1)[0].to(at::kCPU, at::kDouble).contiguous();
}

// Chi-square statistic of counts against probabilities; bins expecting fewer than 5 are merged.
// Returns (statistic, degrees of freedom).
std::pair<double, int> chi_square(const std::vector<int64_t>& counts, const std::vector<double>& probs, int64_t n) {
  double stat = 0, rest_e = 0;
  int64_t rest_o = 0;
  int bins = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double e = probs[i] * static_cast<double>(n);
    if (e < 5) {
      rest_e += e;
      rest_o += counts[i];
      continue;
    }
    stat += (counts[i] - e) * (counts[i] - e) / e;
    ++bins;
  }
  if (rest_e > 0) {
    stat += rest_e >= 1 ? (rest_o - rest_e) * (rest_o - rest_e) / rest_e : (rest_o > 5 ? 1e9 : 0);
    ++bins;
  }
  return {stat, bins - 1};
}

// The chi-square quantile at significance 0.001 (Wilson-Hilferty).
double critical(int dof) {
  const double k = dof, z = 3.0902;
  return k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
}

// softmax(logits / T) truncated to the top k (k = 0: all) and to the top-p nucleus, renormalised:
// computed with tensor ops, independently of the sampler.
std::vector<double> reference(const at::Tensor& logits, double T, int64_t k, double top_p) {
  at::Tensor p = at::softmax(logits / T, 0);
  auto [sorted, order] = p.sort(0, /*descending=*/true);
  if (k > 0) sorted = sorted * at::arange(p.size(0)).lt(k).to(at::kDouble);  // top-k, then renormalise
  sorted = sorted / sorted.sum();
  // top-p over the top-k distribution: keep rank r while the mass before it is below top_p.
  at::Tensor keep = (sorted.cumsum(0) - sorted).lt(top_p);
  at::Tensor q = at::zeros_like(p).index_put_({order}, sorted * keep.to(at::kDouble));
  q = q / q.sum();
  return std::vector<double>(q.data_ptr<double>(), q.data_ptr<double>() + q.numel());
}

// sum (p - q)^2 / q: what a wrong distribution adds per sample to the expected statistic.
double divergence(const std::vector<double>& p, const std::vector<double>& q) {
  double d = 0;
  for (size_t i = 0; i < p.size(); ++i)
    if (q[i] > 0) d += (p[i] - q[i]) * (p[i] - q[i]) / q[i];
  return d;
}

}  // namespace

CATCH_TEST_CASE("the uniform numbers depend only on seed, choice and position", "[sampling]") {
  const double a = sampling_uniform(7, 0, 12);
  CATCH_CHECK(a == sampling_uniform(7, 0, 12));
  CATCH_CHECK(a != sampling_uniform(8, 0, 12));
  CATCH_CHECK(a != sampling_uniform(7, 1, 12));
  CATCH_CHECK(a != sampling_uniform(7, 0, 13));
  double sum = 0;
  for (int64_t t = 0; t < 10000; ++t) {
    const double u = sampling_uniform(3, 2, t);
    CATCH_REQUIRE(u >= 0);
    CATCH_REQUIRE(u < 1);
    sum += u;
  }
  CATCH_CHECK(std::abs(sum / 10000 - 0.5) < 0.01);
}

CATCH_TEST_CASE("first tokens over thousands of seeds follow the processed distribution (chi-square)", "[sampling][stats]") {
  auto target = load64(test::model_dir("llama"));
  const std::vector<int64_t> prompt{3, 17, 42, 9, 100};
  at::Tensor logits = all_logits(*target, prompt)[static_cast<int64_t>(prompt.size()) - 1];
  const int64_t V = logits.size(0), n = 50000;
  struct Case { double T; int64_t k; double p; double wrong_T; int64_t wrong_k; double wrong_p; };
  for (Case c : {Case{1.0, 0, 1.0, 0.7, 0, 1.0}, Case{0.5, 0, 1.0, 0.7, 0, 1.0}, Case{1.0, 20, 1.0, 1.0, 30, 1.0},
                 Case{1.0, 0, 0.9, 1.0, 0, 0.97}, Case{1.5, 20, 0.9, 1.5, 0, 0.9}}) {
    CATCH_INFO("T " << c.T << " top_k " << c.k << " top_p " << c.p);
    SamplingParams sp;
    sp.temperature = c.T;
    sp.top_k = c.k;
    sp.top_p = c.p;
    std::vector<int64_t> counts(static_cast<size_t>(V), 0);
    for (int64_t s = 0; s < n; ++s) {
      sp.seed = static_cast<uint64_t>(s) * 7919 + 1;
      ++counts[sample_token(logits.data_ptr<double>(), V, sp, TokenHistory{}, static_cast<int64_t>(prompt.size()))];
    }
    auto [stat, dof] = chi_square(counts, reference(logits, c.T, c.k, c.p), n);
    CATCH_CHECK(dof > 3);
    CATCH_CHECK(stat < critical(dof));
    // The same counts against a wrong temperature or truncation are rejected: the test has power.
    const auto wrong_ref = reference(logits, c.wrong_T, c.wrong_k, c.wrong_p);
    // The tiny model's logits are flat (std 0.17): a wrong case must differ enough to be seen
    // in n samples (its expected excess n * divergence well above the critical margin).
    CATCH_REQUIRE(static_cast<double>(n) * divergence(reference(logits, c.T, c.k, c.p), wrong_ref) > 200);
    auto [wrong, wdof] = chi_square(counts, wrong_ref, n);
    CATCH_CHECK(wrong > critical(wdof));
  }
}

CATCH_TEST_CASE("processed distribution: bias, penalties and truncation do what they say", "[sampling]") {
  const std::vector<double> x{2.0, 1.0, 0.5, -1.0, 3.0};
  SamplingParams p;
  p.temperature = 1;
  p.top_k = 2;
  auto d = processed_distribution(x.data(), 5, p, TokenHistory{});
  CATCH_REQUIRE(d.size() == 2);  // tokens 0 and 4, in token order
  CATCH_CHECK(d[0].first == 0);
  CATCH_CHECK(d[1].first == 4);
  CATCH_CHECK(std::abs(d[1].second - 1 / (1 + std::exp(-1.0))) < 1e-12);
  p.top_k = 0;
  p.logit_bias = {{3, 100.0}};
  d = processed_distribution(x.data(), 5, p, TokenHistory{});
  CATCH_CHECK(d[3].second > 0.999);
  p.logit_bias.clear();
  p.temperature = 0;
  p.repetition_penalty = 2;  // token 4 seen in the prompt: 3.0 -> 1.5, so token 0 (2.0) wins
  const std::vector<int64_t> prompt{4};
  CATCH_CHECK(sample_token(x.data(), 5, p, TokenHistory{prompt.data(), 1, nullptr, 0, nullptr, 0}, 1) == 0);
  p.repetition_penalty = 1;
  p.frequency_penalty = 0.6;  // token 4 generated twice: 3.0 - 1.2 = 1.8 < 2.0
  const std::vector<int64_t> gen{4, 4};
  CATCH_CHECK(sample_token(x.data(), 5, p, TokenHistory{nullptr, 0, gen.data(), 2, nullptr, 0}, 1) == 0);
  CATCH_CHECK(sample_token(x.data(), 5, p, TokenHistory{nullptr, 0, gen.data(), 1, nullptr, 0}, 1) == 4);
  p.frequency_penalty = 0;
  p.temperature = 1;
  p.min_p = 0.3;  // keeps tokens with p >= 0.3 * p(token 4)
  d = processed_distribution(x.data(), 5, p, TokenHistory{});
  CATCH_CHECK(d.size() == 2);
}

namespace {

// Four parameter sets (and greedy rows) mixed in one batch; choices 0 and 1 of the same prompt.
std::vector<SeqRequest> sampled_requests(const Decoder& target, const std::vector<int64_t>& eos) {
  auto prompts = test::mixed_prompts(14, 1, 16, target.config().vocab_size, 57);
  std::vector<SeqRequest> reqs;
  for (size_t i = 0; i < prompts.size(); ++i) {
    SeqRequest r{prompts[i], 8 + static_cast<int64_t>(i * 5 % 13), eos};
    SamplingParams& s = r.sampling;
    s.seed = 1000 + i;
    switch (i % 5) {
      case 0: s.temperature = 0.5; break;
      case 1: s.temperature = 1.0, s.top_p = 0.9; break;
      case 2: s.temperature = 1.5, s.top_k = 20; break;
      case 3:
        s.temperature = 1.0, s.presence_penalty = 0.5, s.frequency_penalty = 0.3, s.repetition_penalty = 1.2;
        s.logit_bias = {{5, 2.0}, {7, -100.0}};
        s.min_p = 0.02;
        break;
      default: break;  // greedy
    }
    s.logprobs = i % 3 == 0 ? 2 : -1;
    reqs.push_back(r);
  }
  {  // min_tokens: prompt 1's sampling again with EOS masked for its first 6 tokens
    SeqRequest r = reqs[1];
    r.max_tokens = 12;
    r.sampling.min_tokens = 6;
    r.sampling.min_tokens_masked = eos;
    reqs.push_back(r);
  }
  for (uint64_t choice : {0, 1, 2}) {  // n = 3: one prompt, one seed, three choices
    SeqRequest r{prompts[3], 12, eos};
    r.sampling.temperature = 1.0;
    r.sampling.seed = 99;
    r.sampling.choice = choice;
    reqs.push_back(r);
  }
  return reqs;
}

// Every mode, B and K with `draft` equals batch-1 nonspec sampling of `target` with the same
// seeds, token for token, logprobs included.
void sampling_sweep(const std::shared_ptr<const Decoder>& target, const std::shared_ptr<const Decoder>& draft) {
  // EOS: a token that plain sampling emits early for one sequence, so rows stop mid-batch.
  const int64_t eos = plain_decode(*target, sampled_requests(*target, {}), 1)[1].tokens.at(2);
  const auto reqs = sampled_requests(*target, {eos});
  const auto want = plain_decode(*target, reqs, 1);
  int stops = 0;
  for (const auto& w : want) stops += w.finish == FinishReason::Stop;
  CATCH_REQUIRE(stops > 0);
  const size_t n0 = reqs.size() - 3;
  CATCH_CHECK((want[n0].tokens != want[n0 + 1].tokens || want[n0].tokens != want[n0 + 2].tokens));  // choices differ
  // The mask bites: prompt 1 stops at its EOS early; with min_tokens 6 it cannot before 6 tokens.
  CATCH_REQUIRE(want[1].tokens.size() < 6);
  CATCH_CHECK(want[n0 - 1].tokens.size() >= 6);
  for (size_t j = 0; j < 6 && j < want[n0 - 1].tokens.size(); ++j) CATCH_CHECK(want[n0 - 1].tokens[j] != eos);
  const auto batched = plain_decode(*target, reqs, 5);  // batched plain sampling too
  for (size_t i = 0; i < reqs.size(); ++i) CATCH_CHECK(batched[i].tokens == want[i].tokens);

  for (Mode mode : {Mode::NonSpec, Mode::EqSpec, Mode::ExSpec, Mode::InPlace}) {
    for (int64_t B : {1, 3, 8, 16}) {
      for (int64_t K : {1, 3, 5, -1}) {
        if (mode == Mode::NonSpec && K != 1) continue;
        EngineConfig c;
        c.mode = mode;
        c.batch_size = B;
        c.draft_tokens = std::max<int64_t>(K, 1);
        c.adaptive_k = K < 0;
        c.window = c.slots = B + (B % 3) * 2;
        c.prefill_chunk = B % 2 ? 4 : 64;
        SequentialDriver engine(target, draft, c);
        auto got = engine.run(reqs);
        CATCH_INFO("mode " << mode_name(mode) << ", B " << B << ", K " << K);
        for (size_t i = 0; i < reqs.size(); ++i) {
          CATCH_CHECK(got[i].tokens == want[i].tokens);
          CATCH_CHECK(got[i].finish == want[i].finish);
          CATCH_REQUIRE(got[i].logprobs.size() == want[i].logprobs.size());
          for (size_t j = 0; j < want[i].logprobs.size(); ++j) {
            CATCH_CHECK(got[i].logprobs[j].token == want[i].tokens[j]);
            CATCH_CHECK(std::abs(got[i].logprobs[j].logprob - want[i].logprobs[j].logprob) < 1e-9);
          }
        }
        if (mode != Mode::NonSpec && K > 0) CATCH_CHECK(engine.stats().accepted > 0);
      }
    }
  }
}

// The default mode (in place) at batch 16, the draft proposing 3 tokens a step (adaptive K
// drafts nothing with random drafts, which agree rarely): seeded sampling equals batch-1
// nonspec sampling of the same target.
void default_mode_sweep(const std::shared_ptr<const Decoder>& target, const std::shared_ptr<const Decoder>& draft) {
  const int64_t eos = plain_decode(*target, sampled_requests(*target, {}), 1)[1].tokens.at(2);
  const auto reqs = sampled_requests(*target, {eos});
  const auto want = plain_decode(*target, reqs, 1);
  EngineConfig c;  // in place
  c.adaptive_k = false;
  c.draft_tokens = 3;
  c.batch_size = 16;
  c.slots = 16;
  SequentialDriver engine(target, draft, c);
  const auto got = engine.run(reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    CATCH_CHECK(got[i].tokens == want[i].tokens);
    CATCH_CHECK(got[i].finish == want[i].finish);
  }
  CATCH_CHECK(engine.stats().accepted > 0);
}

// default_mode_sweep on an architecture's GGUF files of the kquant preset (write_gguf.py): the F32
// one under float32, Q8_0 and Q4_K_M under int8, each target and draft from files of one type.
// read_back checks, before the sweep, that the file said what its kind needs.
void gguf_default_mode_sweep(const char* arch, const std::function<void(const ModelConfig&)>& read_back) {
  for (const char* type : {"f32", "q8_0", "q4_k_m"}) {
    CATCH_INFO(arch << " " << type);
    const at::ScalarType dt = std::string(type) == "f32" ? at::kFloat : at::kChar;
    auto target = test::load_as(test::kquant_gguf(type, false, arch), dt);
    read_back(target->config());
    default_mode_sweep(target, test::load_as(test::kquant_gguf(type, true, arch), dt));
  }
}

}  // namespace

CATCH_TEST_CASE("every mode equals batch-1 nonspec sampling with the same seed in float64", "[sampling][oracle]") {
  sampling_sweep(load64(test::model_dir("llama")), load64(truncated_draft()));
}

// int8 and bfloat16 (issue 47): rows independent of their batch, so seeded sampling holds too,
// against each dtype's own batch-1 sampling.
CATCH_TEST_CASE("every mode equals batch-1 nonspec sampling with the same seed in float32, int8 and bfloat16",
                "[sampling][oracle][int8][isa]") {
  for (at::ScalarType dt : test::invariant_dtypes()) {
    CATCH_INFO(dtype_name(dt));
    sampling_sweep(test::load_as(test::model_dir("llama"), dt), test::load_as(truncated_draft(), dt));
  }
}

// Issue 70: GGUF files of every other weight type served (model/gguf/ggml_types.h), under int8:
// blocks on the packed 4-bit kernel (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS) or the K-quant one
// (Q2_K, Q3_K, Q5_K), or values quantised at load (MXFP4). The default mode at
// batch 16 with each file's own draft.
CATCH_TEST_CASE("GGUF files of every other served type: the default mode at batch 16 equals batch-1 nonspec sampling",
                "[sampling][oracle][int8][gguf]") {
  for (const char* type : {"q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "mxfp4", "q2_k", "q3_k", "q5_k", "iq4_xs"}) {
    CATCH_INFO(type);
    auto target = test::load_as(test::kquant_gguf(type), at::kChar);
    auto draft = test::load_as(test::kquant_gguf(type, true), at::kChar);
    default_mode_sweep(target, draft);
  }
}

// Issue 71: Mistral's sliding window (16 positions in the tiny preset; the sweep's sequences
// outgrow it), in float64 and from its GGUF files (the F32 one under float32; Q8_0 and Q4_K_M
// under int8), each against its own batch-1 nonspec sampling.
CATCH_TEST_CASE("every mode equals batch-1 nonspec sampling with the same seed on a Mistral pair with a sliding window",
                "[sampling][oracle][window]") {
  sampling_sweep(load64(test::model_dir("mistral")), load64(test::truncated_draft("mistral")));
}

// Phi-3's too: its fused attn_qkv and ffn_up in those types, its partial rope and window.
CATCH_TEST_CASE("Mistral's and Phi-3's GGUF files (F32, Q8_0, Q4_K_M): the default mode at batch 16 equals batch-1 nonspec sampling",
                "[sampling][oracle][int8][gguf][window][phi3]") {
  for (const char* arch : {"mistral", "phi3"})
    gguf_default_mode_sweep(arch, [](const ModelConfig& c) { CATCH_REQUIRE(c.sliding_window == 16); });
}

// Issue 71: Phi-3.5's longrope, on each set of factors a load can serve (the tiny preset's
// original context is 128, beyond the sweep's sequences, so its own short factors apply; the long
// ones are a load's choice), with a draft of the same scaling.
CATCH_TEST_CASE("a Phi-3 with longrope: every mode equals batch-1 nonspec sampling, short and long factors",
                "[sampling][oracle][phi3][longrope]") {
  MakeModelOptions o;
  o.arch = "phi3";
  o.seed = 1;
  o.longrope = true;
  const std::string dir = test::model_dir(o), draft = test::scratch_dir() + "/phi3-longrope-draft";
  make_draft(dir, 1, draft);
  for (bool long_context : {false, true}) {
    CATCH_INFO((long_context ? "long" : "short") << " factors");
    LoadOptions lo{at::kDouble, test::device()};
    lo.long_context = long_context;
    const auto target = Decoder::load(dir, lo);
    CATCH_REQUIRE(target->config().rope_scaling.long_context == long_context);
    sampling_sweep(target, Decoder::load(draft, lo));
  }
}

// Issue 71: a draft of another architecture wherever the vocabularies match: a Phi-3 target (fused
// products, partial rope, a window) with a Llama draft and a Mistral draft; a Gemma 3 target
// with a Llama draft, and a Llama target with a Gemma 3 draft.
CATCH_TEST_CASE("a draft of another architecture: the default mode at batch 16 equals batch-1 nonspec sampling",
                "[sampling][oracle][phi3][gemma3]") {
  const auto target = load64(test::model_dir("phi3"));
  for (const char* arch : {"llama", "mistral"}) {
    CATCH_INFO("draft " << arch);
    default_mode_sweep(target, load64(test::truncated_draft(arch)));
  }
  CATCH_INFO("gemma3 with llama, llama with gemma3");
  default_mode_sweep(load64(test::model_dir("gemma3")), load64(test::truncated_draft("llama")));
  default_mode_sweep(load64(test::model_dir("llama")), load64(test::truncated_draft("gemma3")));
}

// Issue 71: Gemma 3's two layer kinds (a sliding layer with its local rope, then a full one;
// window 16, which the sequences outgrow): every mode in float64; the default mode in float32,
// int8 and bfloat16 (its GELU-tanh kernel and (1 + w) norms, row by row), and from its GGUF files
// (the F32 one under float32; Q8_0 and Q4_K_M under int8).
CATCH_TEST_CASE("every mode equals batch-1 nonspec sampling with the same seed on a Gemma 3 pair", "[sampling][oracle][gemma3]") {
  sampling_sweep(load64(test::model_dir("gemma3")), load64(test::truncated_draft("gemma3")));
}

CATCH_TEST_CASE("Gemma 3 in float32, int8 and bfloat16 and from its GGUF files: the default mode at batch 16 equals batch-1 nonspec sampling",
                "[sampling][oracle][int8][gguf][gemma3]") {
  for (at::ScalarType dt : test::invariant_dtypes()) {
    CATCH_INFO(dtype_name(dt));
    default_mode_sweep(test::load_as(test::model_dir("gemma3"), dt), test::load_as(test::truncated_draft("gemma3"), dt));
  }
  gguf_default_mode_sweep("gemma3", [](const ModelConfig& c) {
    CATCH_REQUIRE(c.layer_kind(0).rope == RopeKind::Local);
    CATCH_REQUIRE(c.layer_kind(1).window == AttentionWindow::Full);
  });
  // Gemma 3 270M beside 27B in small: a draft of fewer, narrower layers (tiny: 4 of width 64)
  // for a target of 8 of width 256, the same vocabulary
  CATCH_INFO("small target, tiny draft");
  default_mode_sweep(test::load_as(test::model_dir("gemma3", "small", 3), at::kFloat), test::load_as(test::model_dir("gemma3"), at::kFloat));
}

// Issue 71: Gemma 2 (scores and logits soft-capped, each 2nd layer sliding under the model's one
// rope; window 16, which the sequences outgrow): every mode in float64; the default mode in
// float32, int8 and bfloat16 (the capped scores in the fixed-order attention kernel, the capped
// logits element by element), and from its GGUF files.
CATCH_TEST_CASE("every mode equals batch-1 nonspec sampling with the same seed on a Gemma 2 pair", "[sampling][oracle][gemma2]") {
  sampling_sweep(load64(test::model_dir("gemma2")), load64(test::truncated_draft("gemma2")));
}

CATCH_TEST_CASE("Gemma 2 in float32, int8 and bfloat16 and from its GGUF files: the default mode at batch 16 equals batch-1 nonspec sampling",
                "[sampling][oracle][int8][gguf][gemma2]") {
  for (at::ScalarType dt : test::invariant_dtypes()) {
    CATCH_INFO(dtype_name(dt));
    default_mode_sweep(test::load_as(test::model_dir("gemma2"), dt), test::load_as(test::truncated_draft("gemma2"), dt));
  }
  gguf_default_mode_sweep("gemma2", [](const ModelConfig& c) {
    CATCH_REQUIRE(c.attn_logit_softcapping > 0);
    CATCH_REQUIRE(c.final_logit_softcapping > 0);
    CATCH_REQUIRE(c.layer_kind(0).window == AttentionWindow::Sliding);
    CATCH_REQUIRE(c.layer_kind(1).window == AttentionWindow::Full);
  });
}

// Issue 72: Qwen3-MoE (8 experts, 2 a row, on every layer): every mode in float64; the default
// mode in float32, int8 and bfloat16, whose experts multiply only the rows that chose them, and
// with a dense draft.
CATCH_TEST_CASE("every mode equals batch-1 nonspec sampling with the same seed on a Qwen3-MoE pair", "[sampling][oracle][moe]") {
  sampling_sweep(load64(test::model_dir("qwen3moe")), load64(test::truncated_draft("qwen3moe")));
}

CATCH_TEST_CASE("Qwen3-MoE in float32, int8 and bfloat16: the default mode at batch 16 equals batch-1 nonspec sampling",
                "[sampling][oracle][int8][moe]") {
  for (at::ScalarType dt : test::invariant_dtypes()) {
    CATCH_INFO(dtype_name(dt));
    default_mode_sweep(test::load_as(test::model_dir("qwen3moe"), dt), test::load_as(test::truncated_draft("qwen3moe"), dt));
  }
  CATCH_INFO("a dense Qwen3 draft");
  default_mode_sweep(test::load_as(test::model_dir("qwen3moe"), at::kFloat), test::load_as(test::truncated_draft("qwen3"), at::kFloat));
}

// Its GGUF files (write_gguf.py as llama.cpp's converter writes qwen3moe: the experts as 3-D
// tensors, the router in F32): the F32 one under float32, Q8_0 and Q4_K_M under int8, each expert's
// blocks on the packed kernels.
CATCH_TEST_CASE("Qwen3-MoE from its GGUF files: the default mode at batch 16 equals batch-1 nonspec sampling",
                "[sampling][oracle][int8][gguf][moe]") {
  gguf_default_mode_sweep("qwen3moe", [](const ModelConfig& c) { CATCH_REQUIRE(c.layer_kind(0).mlp == Mlp::Experts); });
}

// Issue 62: the draft proposes from a shortlist (half the tokens plain sampling emits here), or
// with its head read in 4 bits.
CATCH_TEST_CASE("every mode equals batch-1 nonspec sampling with the same seed, the draft's head over a shortlist or screened",
                "[sampling][oracle][shortlist]") {
  auto target = load64(test::model_dir("llama"));
  const auto emitted = plain_decode(*target, sampled_requests(*target, {}), 1);
  const auto half = test::frequent_tokens(emitted, 0.5, target->config().vocab_size);
  sampling_sweep(target, test::load_shortlisted(truncated_draft(), at::kDouble, test::device(), half));
  // A draft head read in 4 bits: its q is the screen's logits with 4 candidates' scored again.
  if (test::device().is_cpu()) sampling_sweep(test::load_as(test::model_dir("llama"), at::kChar), test::load_screened(truncated_draft(), 4));
}

CATCH_TEST_CASE("in place equals batch-1 nonspec sampling with the same seed in float64", "[sampling][oracle][inplace]") {
  auto target = load64(test::model_dir("llama"));
  auto draft = load64(truncated_draft());
  const int64_t eos = plain_decode(*target, sampled_requests(*target, {}), 1)[1].tokens.at(2);
  const auto reqs = sampled_requests(*target, {eos});
  const auto want = plain_decode(*target, reqs, 1);
  for (int64_t B : {1, 3, 8, 16}) {
    for (int64_t K : {0, 1, 3, 5, -1}) {  // 0: no draft, plain steps
      EngineConfig c;
      c.mode = Mode::InPlace;
      c.batch_size = B;
      c.slots = B + (B % 3) * 2;
      c.prefill_chunk = B % 2 ? 4 : 64;
      c.draft_tokens = std::max<int64_t>(K, 1);
      c.adaptive_k = K < 0;
      SequentialDriver runner(target, K == 0 ? nullptr : draft, c);
      Timeline t;  // the last two requests join while the others decode
      for (size_t i = 0; i < reqs.size(); ++i) t.arrive_at.push_back(i + 2 >= reqs.size() ? 3 : 0);
      auto got = runner.run(reqs, t);
      CATCH_INFO("B " << B << ", K " << K);
      for (size_t i = 0; i < reqs.size(); ++i) {
        CATCH_CHECK(got[i].tokens == want[i].tokens);
        CATCH_CHECK(got[i].finish == want[i].finish);
        CATCH_REQUIRE(got[i].logprobs.size() == want[i].logprobs.size());
        for (size_t j = 0; j < want[i].logprobs.size(); ++j)
          CATCH_CHECK(std::abs(got[i].logprobs[j].logprob - want[i].logprobs[j].logprob) < 1e-9);
      }
      if (K > 0) CATCH_CHECK(runner.stats().accepted > 0);
    }
  }
}

CATCH_TEST_CASE("logprobs are the target's log-softmax of its raw logits", "[sampling][logprobs]") {
  auto target = load64(test::model_dir("llama"));
  SeqRequest r{{5, 9, 200, 31}, 10, {}};
  r.sampling.temperature = 0.8;
  r.sampling.seed = 4;
  r.sampling.logprobs = 3;
  auto got = plain_decode(*target, {r}, 1)[0];
  CATCH_REQUIRE(got.logprobs.size() == got.tokens.size());
  std::vector<int64_t> all = r.prompt;
  all.insert(all.end(), got.tokens.begin(), got.tokens.end());
  at::Tensor lsm = at::log_softmax(all_logits(*target, all), 1);
  for (size_t j = 0; j < got.tokens.size(); ++j) {
    at::Tensor row = lsm[static_cast<int64_t>(r.prompt.size() + j) - 1];
    CATCH_CHECK(std::abs(got.logprobs[j].logprob - row[got.tokens[j]].item<double>()) < 1e-9);
    auto [vals, ids] = row.topk(3);
    CATCH_REQUIRE(got.logprobs[j].top.size() == 3);
    for (int64_t k = 0; k < 3; ++k) {
      CATCH_CHECK(got.logprobs[j].top[k].first == ids[k].item<int64_t>());
      CATCH_CHECK(std::abs(got.logprobs[j].top[k].second - vals[k].item<double>()) < 1e-9);
    }
  }
}

CATCH_TEST_CASE("the actor pipeline samples exactly as plain sampling, logprobs streamed", "[sampling][pipeline][oracle]") {
  using namespace std::chrono_literals;
  auto target = load64(test::model_dir("llama"));
  const auto reqs = sampled_requests(*target, target->config().eos_ids);  // the engine's default EOS
  const auto want = plain_decode(*target, reqs, 1);
  struct Case { Mode mode; int64_t B, K; bool overlap; };
  for (Case c : {Case{Mode::NonSpec, 4, 0, true}, Case{Mode::EqSpec, 3, 3, false}, Case{Mode::ExSpec, 4, 3, true},
                 Case{Mode::ExSpec, 8, -1, true}, Case{Mode::InPlace, 4, 3, true}, Case{Mode::InPlace, 8, -1, true}}) {
    CATCH_INFO("mode " << mode_name(c.mode) << " B " << c.B << " K " << c.K);
    EngineOptions o;
    o.model_dir = test::model_dir("llama");
    o.draft_dir = c.mode == Mode::NonSpec ? "" : truncated_draft();
    o.dtype = "float64";
    o.device = test::device_name();
    o.decoding.mode = c.mode;
    o.decoding.batch_size = c.B;
    o.decoding.draft_tokens = std::max<int64_t>(c.K, 1);
    o.decoding.adaptive_k = c.K < 0;
    o.decoding.window = o.decoding.slots = 2 * c.B;
    o.overlap = c.overlap;
    o.blas_threads = 1;
    auto engine = Engine::start(o);
    auto sink = std::make_shared<Collector>();
    std::vector<SeqId> ids;
    for (const auto& r : reqs) ids.push_back(engine->submit(r, 1, sink).id);
    CATCH_REQUIRE(sink->wait_for(reqs.size(), 120s));
    auto got = sink->results();
    auto lps = sink->streamed_logprobs();
    for (size_t i = 0; i < reqs.size(); ++i) {
      CATCH_CHECK(got.at(ids[i]).tokens == want[i].tokens);
      CATCH_CHECK(got.at(ids[i]).logprobs.size() == want[i].logprobs.size());
      CATCH_CHECK(lps[ids[i]].size() == want[i].logprobs.size());
    }
    engine->shutdown(true);
  }
}

CATCH_TEST_CASE("top-p over a large vocabulary keeps exactly the nucleus a full sort gives", "[sampling]") {
  // The sampler sorts only the head of the distribution; a full sort (tensor ops) must agree.
  at::manual_seed(5);
  for (double scale : {1.0, 4.0, 12.0}) {
    at::Tensor logits = (at::randn({20000}, at::kDouble) * scale).contiguous();
    for (double top_p : {0.5, 0.9, 0.99}) {
      CATCH_INFO("scale " << scale << " top_p " << top_p);
      SamplingParams p;
      p.temperature = 0.8;
      p.top_p = top_p;
      const auto got = processed_distribution(logits.data_ptr<double>(), logits.size(0), p, TokenHistory{});
      const auto want = reference(logits, 0.8, 0, top_p);
      size_t kept = 0;
      for (double q : want) kept += q > 0;
      CATCH_REQUIRE(got.size() == kept);
      for (const auto& [id, q] : got) CATCH_REQUIRE(std::abs(q - want[id]) < 1e-12);
    }
  }
}
