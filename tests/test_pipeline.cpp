// The actor pipeline with real messages: concurrent producers, cancellation, admission control,
// shutdown. Every mode must still equal the float64 oracle exactly.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>

#include "actors/collector.h"
#include "actors/engine.h"
#include "model/decoder.h"
#include "model/oracle/plain_decode.h"
#include "tests/random_draft_length.h"
#include "tests/support.h"

using namespace exspec;
using namespace std::chrono_literals;

namespace {

// A Collector that also counts each sequence's on_finish calls: every sink is told exactly once.
class CountingCollector : public Collector {
 public:
  void on_finish(SeqId id, const SeqResult& r) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_[id];
    }
    Collector::on_finish(id, r);
  }
  std::map<SeqId, int> finish_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  mutable std::mutex mu_;
  std::map<SeqId, int> calls_;
};

// The first layer of the tiny target of `arch`, made once per process.
// K = 0 in options(): no draft (in place then runs plain steps).
std::string draft_dir(const std::string& arch = "llama") {
  static std::mutex mu;
  static std::map<std::string, std::string> made;
  std::lock_guard<std::mutex> lock(mu);
  auto& dir = made[arch];
  if (dir.empty()) {
    dir = test::scratch_dir() + "/pipeline-" + arch + "-draft1";
    make_draft(test::model_dir(arch), 1, dir);
  }
  return dir;
}

EngineOptions options(Mode mode, int64_t B, int64_t K, bool overlap, const std::string& arch = "llama") {
  EngineOptions o;
  o.model_dir = test::model_dir(arch);
  o.draft_dir = mode == Mode::NonSpec || K == 0 ? "" : draft_dir(arch);
  o.dtype = "float64";
  o.device = test::device_name();
  o.decoding.mode = mode;
  o.decoding.batch_size = B;
  o.decoding.draft_tokens = std::max<int64_t>(K, 1);
  o.decoding.adaptive_k = K < 0;  // -1: auto; -2: random K per step (set o.policy)
  if (K == -2 && mode != Mode::NonSpec) o.policy = std::make_shared<test::RandomDraftLength>(B * 13 + 1, 4);
  o.decoding.window = o.decoding.slots = 2 * B;
  o.decoding.prefill_chunk = 6;  // in place: prompts stored in chunks between decode steps
  o.overlap = overlap;
  o.blas_threads = 1;
  return o;
}

// A sink that cancels its sequence after `after` tokens (a client that goes away mid-stream).
class CancellingSink : public Collector {
 public:
  CancellingSink(Engine* e, size_t after) : engine_(e), after_(after) {}
  void on_tokens(SeqId id, const std::vector<int64_t>& delta) override {
    Collector::on_tokens(id, delta);
    std::lock_guard<std::mutex> lock(mu_);
    seen_[id] += delta.size();
    if (seen_[id] >= after_ && !sent_[id]) {
      sent_[id] = true;
      engine_->cancel(id);
    }
  }

 private:
  Engine* engine_;
  size_t after_;
  std::mutex mu_;
  std::map<SeqId, size_t> seen_;
  std::map<SeqId, bool> sent_;
};

}  // namespace

namespace {

// Four concurrent producers submit interleaved slices; every mode must return the float64 oracle.
void pipeline_oracle(const std::string& arch) {
  auto target = Decoder::load(test::model_dir(arch), {at::kDouble, test::device()});
  auto prompts = test::mixed_prompts(24, 1, 18, target->config().vocab_size, 41);
  auto plain = plain_decode(*target, [&] {
    std::vector<SeqRequest> r;
    for (auto& p : prompts) r.push_back(SeqRequest{p, 20, {}});
    return r;
  }());
  const int64_t eos = plain[2].tokens.at(4);
  std::vector<SeqRequest> reqs;
  for (size_t i = 0; i < prompts.size(); ++i) reqs.push_back(SeqRequest{prompts[i], 4 + static_cast<int64_t>(i * 5 % 17), {eos}});
  auto want = plain_decode(*target, reqs, 1);

  struct Case { Mode mode; int64_t B, K; bool overlap; };
  for (Case c : {Case{Mode::NonSpec, 4, 0, true}, Case{Mode::EqSpec, 3, 3, true}, Case{Mode::ExSpec, 4, 3, true},
                 Case{Mode::ExSpec, 8, 5, false}, Case{Mode::EqSpec, 8, 1, false}, Case{Mode::ExSpec, 4, -1, true},
                 Case{Mode::ExSpec, 4, -2, true}, Case{Mode::EqSpec, 3, -2, false}, Case{Mode::InPlace, 4, 3, true},
                 Case{Mode::InPlace, 8, 5, false}, Case{Mode::InPlace, 4, -1, true}, Case{Mode::InPlace, 3, -2, true},
                 Case{Mode::InPlace, 4, 0, true}}) {
    CATCH_INFO("mode " << mode_name(c.mode) << " B " << c.B << " K " << c.K << " overlap " << c.overlap);
    auto engine = Engine::start(options(c.mode, c.B, c.K, c.overlap, arch));
    auto sink = std::make_shared<CountingCollector>();
    std::vector<SeqId> ids(reqs.size());
    std::vector<std::thread> producers;
    for (int t = 0; t < 4; ++t)  // four producers submit interleaved slices at the same time
      producers.emplace_back([&, t] {
        for (size_t i = t; i < reqs.size(); i += 4) {
          SeqRequest r = reqs[i];
          auto res = engine->submit(r, i % 2, sink);
          ids[i] = res.id;
        }
      });
    for (auto& p : producers) p.join();
    CATCH_REQUIRE(sink->wait_for(reqs.size(), 120s));
    auto got = sink->results();
    auto streamed = sink->streamed();
    int64_t streamed_total = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
      CATCH_CHECK(got.at(ids[i]).tokens == want[i].tokens);
      CATCH_CHECK(got.at(ids[i]).finish == want[i].finish);
      CATCH_CHECK(streamed[ids[i]] == want[i].tokens);  // deltas concatenate to the result
      streamed_total += static_cast<int64_t>(streamed[ids[i]].size());
    }
    for (auto [id, n] : sink->finish_calls()) CATCH_CHECK(n == 1);
    EngineStats st = engine->stats();
    CATCH_CHECK(st.totals.committed == streamed_total);  // stats agree with what the sinks got
    CATCH_CHECK(st.finished == reqs.size());
    CATCH_CHECK(st.queued == 0);
    CATCH_CHECK(st.active == 0);
    if (c.mode != Mode::NonSpec && c.K != -1 && c.K != 0) CATCH_CHECK(st.totals.drafted > 0);
    if (c.K == 0) CATCH_CHECK(st.totals.drafted == 0);  // no draft: every step plain
    if (c.K == -2) CATCH_CHECK(st.totals.k_steps.at(0) > 0);  // plain target steps happened
    engine->shutdown(true);
  }
}

}  // namespace

CATCH_TEST_CASE("concurrent producers through the pipeline get the oracle's tokens, every mode", "[pipeline][oracle]") {
  pipeline_oracle("llama");
}

CATCH_TEST_CASE("the pipeline returns the oracle's tokens on a GLM-4 pair, every mode", "[pipeline][oracle][glm]") {
  pipeline_oracle("glm4");
}

// Issue 71: Mistral's sliding window (16 positions here), which most of these sequences outgrow.
CATCH_TEST_CASE("the pipeline returns the oracle's tokens on a Mistral pair with a sliding window, every mode",
                "[pipeline][oracle][window]") {
  pipeline_oracle("mistral");
}

// Phi-3: fused q/k/v and gate/up, rope over the first 3/4 of each head, a window of 16.
CATCH_TEST_CASE("the pipeline returns the oracle's tokens on a Phi-3 pair, every mode", "[pipeline][oracle][phi3]") {
  pipeline_oracle("phi3");
}

// Gemma 3: sliding layers (local rope) beside full ones, (1 + w) sandwich norms, GELU-tanh,
// scaled embeddings.
CATCH_TEST_CASE("the pipeline returns the oracle's tokens on a Gemma 3 pair, every mode", "[pipeline][oracle][gemma3]") {
  pipeline_oracle("gemma3");
}

// Qwen3-MoE: a layer of experts on every layer, each row routed by its own logits.
CATCH_TEST_CASE("the pipeline returns the oracle's tokens on a Qwen3-MoE pair, every mode", "[pipeline][oracle][moe]") {
  pipeline_oracle("qwen3moe");
}

CATCH_TEST_CASE("cancellation mid-generation frees the sequence and the others go on", "[pipeline]") {
  for (Mode mode : {Mode::ExSpec, Mode::EqSpec, Mode::InPlace}) {
    auto engine = Engine::start(options(mode, 4, 3, true));
    auto keep = std::make_shared<Collector>();
    auto cancel = std::make_shared<CancellingSink>(engine.get(), 5);
    auto prompts = test::mixed_prompts(6, 2, 10, 256, 5);
    std::vector<SeqId> kept, cancelled;
    for (size_t i = 0; i < prompts.size(); ++i) {
      if (i % 2) cancelled.push_back(engine->submit(SeqRequest{prompts[i], 120, {}}, 1, cancel).id);
      else kept.push_back(engine->submit(SeqRequest{prompts[i], 40, {}}, 1, keep).id);
    }
    CATCH_REQUIRE(keep->wait_for(kept.size(), 120s));
    CATCH_REQUIRE(cancel->wait_for(cancelled.size(), 120s));
    for (auto [id, r] : cancel->results()) {
      CATCH_CHECK(r.finish == FinishReason::None);
      CATCH_CHECK(r.tokens.size() >= 5);
      CATCH_CHECK(r.tokens.size() < 120);
    }
    for (auto [id, r] : keep->results()) CATCH_CHECK(r.tokens.size() == 40);
    EngineStats st = engine->stats();
    CATCH_CHECK(st.cancelled == cancelled.size());
    CATCH_CHECK(st.active == 0);
    engine->shutdown(true);
  }
}

CATCH_TEST_CASE("a burst beyond the queue bound fails fast, nothing is lost", "[pipeline]") {
  EngineOptions o = options(Mode::ExSpec, 2, 3, true);
  o.max_queue = 5;
  auto engine = Engine::start(o);
  auto sink = std::make_shared<Collector>();
  size_t ok = 0, overloaded = 0;
  for (int i = 0; i < 40; ++i) {
    auto r = engine->submit(SeqRequest{{1, 2, 3, static_cast<int64_t>(i)}, 30, {}}, 0, sink);
    if (r.status == SubmitStatus::Ok) ++ok;
    else if (r.status == SubmitStatus::Overloaded) ++overloaded;
  }
  CATCH_CHECK(overloaded > 0);
  CATCH_CHECK(ok >= 5);
  CATCH_REQUIRE(sink->wait_for(ok, 120s));
  CATCH_CHECK(sink->results().size() == ok);
  auto bad = engine->submit(SeqRequest{{}, 3, {}}, 0, sink);
  CATCH_CHECK(bad.status == SubmitStatus::Invalid);
  CATCH_CHECK_THAT(bad.message, Catch::Contains("prompt is empty"));
  engine->shutdown(true);
  auto late = engine->submit(SeqRequest{{1}, 3, {}}, 0, sink);
  CATCH_CHECK(late.status == SubmitStatus::ShuttingDown);
}

CATCH_TEST_CASE("submit_many hands the pool-manager every request at once: fixed batches start full", "[pipeline]") {
  EngineOptions o = options(Mode::NonSpec, 4, 0, false);
  auto engine = Engine::start(o);
  auto sink = std::make_shared<Collector>();
  std::vector<SeqRequest> reqs;
  for (int i = 0; i < 8; ++i) reqs.push_back(SeqRequest{{3, 1, 4, static_cast<int64_t>(i)}, 10, {999}});
  auto bad = reqs;
  bad[5].prompt.clear();
  auto refused = engine->submit_many(bad, 0, sink);
  CATCH_CHECK(refused[0].status == SubmitStatus::Invalid);  // all or nothing
  CATCH_CHECK_THAT(refused[0].message, Catch::Contains("request 5"));
  auto res = engine->submit_many(reqs, 0, sink);
  for (const auto& r : res) CATCH_CHECK(r.status == SubmitStatus::Ok);
  CATCH_REQUIRE(sink->wait_for(8, 120s));
  EngineStats st = engine->stats();
  // Two full batches of 4, 10 steps each: no batch was started with the first arrival alone.
  CATCH_CHECK(st.totals.steps == 20);
  CATCH_CHECK(st.totals.row_verifications == 80);
  CATCH_CHECK(st.submitted == 8);
  engine->shutdown(true);
}

CATCH_TEST_CASE("stats read from other threads, then shutdown from this one: no hang", "[pipeline]") {
  auto engine = Engine::start(options(Mode::ExSpec, 2, 3, true));
  auto sink = std::make_shared<Collector>();
  for (int i = 0; i < 6; ++i) engine->submit(SeqRequest{{1, 2, static_cast<int64_t>(i)}, 20, {}}, 0, sink);
  std::thread reader([&] {
    for (int i = 0; i < 50; ++i) engine->stats();
  });
  reader.join();
  CATCH_REQUIRE(sink->wait_for(6, 120s));
  EngineStats st = engine->stats();
  CATCH_CHECK(st.finished == 6);
  CATCH_CHECK(st.totals.committed == 6 * 20);
  engine->shutdown(false);
  CATCH_CHECK(sink->results().size() == 6);
}

CATCH_TEST_CASE("shutdown with work in flight cancels cleanly and tells every sink once", "[pipeline]") {
  for (Mode mode : {Mode::ExSpec, Mode::EqSpec, Mode::NonSpec, Mode::InPlace}) {
    auto engine = Engine::start(options(mode, 4, 3, true));
    auto sink = std::make_shared<CountingCollector>();
    for (int i = 0; i < 20; ++i) engine->submit(SeqRequest{{5, 6, static_cast<int64_t>(i)}, 200, {}}, 0, sink);
    std::this_thread::sleep_for(50ms);
    engine->shutdown(false);  // must return: no hang
    CATCH_CHECK(sink->results().size() == 20);
    for (auto [id, n] : sink->finish_calls()) CATCH_CHECK(n == 1);
    size_t cut = 0;
    for (auto [id, r] : sink->results()) cut += r.finish == FinishReason::None;
    CATCH_CHECK(cut > 0);
  }
}

// Issue 22: with a draft that never agrees, speculation must cost nothing. The calibration
// measures the draft's agreement at start-up, so the engine starts at K = 0; it then runs what
// nonspec runs (full batches of the same rows, one token a row a step), and the only drafting
// steps are the policy's probes: K = 1, at most one per probe_every (16) plain steps before it
// (the 3 % time budget makes them rarer still). Steps are counted, not timed.
namespace {
void never_agrees(Mode mode) {
  const int64_t B = 4, max_tokens = 40;
  EngineOptions o = options(mode, B, -1, true);
  o.draft_dir = test::model_dir("llama", "tiny", 7);  // same shape, unrelated weights
  auto engine = Engine::start(o);
  auto target = Decoder::load(o.model_dir, {at::kDouble, test::device()});
  // Equal prompt lengths and no stop token (999 is outside the vocabulary): every row runs its
  // max_tokens, so every batch can stay a full same-length group, as nonspec's do.
  std::vector<SeqRequest> reqs;
  for (int i = 0; i < 16; ++i)
    reqs.push_back(SeqRequest{{7, 3, static_cast<int64_t>(i), 5, 11, static_cast<int64_t>(2 * i)}, max_tokens, {999}});
  auto run = [&](std::vector<SeqRequest> r) {
    auto sink = std::make_shared<Collector>();
    std::vector<SeqId> ids;
    for (const auto& s : engine->submit_many(r, 0, sink)) ids.push_back(s.id);
    CATCH_REQUIRE(sink->wait_for(ids.size(), 120s));
    auto got = sink->results();
    std::vector<SeqResult> out;
    for (SeqId id : ids) out.push_back(got.at(id));
    return out;
  };
  run(std::vector<SeqRequest>(reqs.begin(), reqs.begin() + B));  // warm-up
  const RunStats before = engine->stats().totals;
  const std::vector<SeqResult> got = run(reqs);
  const RunStats d = diff(engine->stats().totals, before);
  const auto want = plain_decode(*target, reqs, 1);
  for (size_t i = 0; i < reqs.size(); ++i) CATCH_CHECK(got[i].tokens == want[i].tokens);

  CATCH_CHECK(engine->stats().speculation.acceptance < 0.25);
  CATCH_CHECK(d.committed == 16 * max_tokens);
  CATCH_CHECK(d.row_verifications == B * d.steps);  // full batches only
  CATCH_CHECK(d.steps == 16 * max_tokens / B);       // one token a row a step: no step wasted
  const int64_t plain = d.k_steps.at(0), probes = d.steps - plain;
  CATCH_CHECK(d.k_steps.size() <= 2);  // drafting steps are probes of one draft
  CATCH_CHECK(probes * 16 <= plain);
  CATCH_CHECK(d.drafted == B * probes);
  CATCH_CHECK(d.reused_steps >= d.steps - 2 * 16 / B);  // the same rows go on, no copy
  engine->shutdown(true);
}
}  // namespace

CATCH_TEST_CASE("a draft that never agrees: plain steps over full batches, probes within their share", "[pipeline][adaptive]") {
  CATCH_SECTION("exspec") { never_agrees(Mode::ExSpec); }
  // In place the draft does not even store the prompts (drafting_pays): probes catch them up.
  CATCH_SECTION("inplace") { never_agrees(Mode::InPlace); }
}

namespace {

// A Collector that also keeps each sequence's prompt logprobs, and whether they came before its
// first token.
class ScoringCollector : public Collector {
 public:
  void on_prompt_logprobs(SeqId id, const std::vector<TokenLogprob>& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    scored_[id].push_back(e);
    before_tokens_[id] = !tokens_seen_[id];
  }
  void on_tokens(SeqId id, const std::vector<int64_t>& delta) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tokens_seen_[id] = true;
    }
    Collector::on_tokens(id, delta);
  }
  std::map<SeqId, std::vector<std::vector<TokenLogprob>>> scored() const {
    std::lock_guard<std::mutex> lock(mu_);
    return scored_;
  }
  bool before_tokens(SeqId id) const {
    std::lock_guard<std::mutex> lock(mu_);
    return before_tokens_.count(id) && before_tokens_.at(id);
  }

 private:
  mutable std::mutex mu_;
  std::map<SeqId, std::vector<std::vector<TokenLogprob>>> scored_;
  std::map<SeqId, bool> tokens_seen_, before_tokens_;
};

}  // namespace

CATCH_TEST_CASE("echo: the prompt's logprobs come from the engine's prefill, equal to a forward of the prompt alone",
                "[pipeline][logprobs]") {
  auto target = Decoder::load(test::model_dir("llama"), {at::kDouble, test::device()});
  const auto prompts = test::mixed_prompts(6, 2, 30, target->config().vocab_size, 23);
  for (Mode mode : {Mode::InPlace, Mode::ExSpec, Mode::NonSpec}) {
    CATCH_INFO("mode " << mode_name(mode));
    EngineOptions o = options(mode, 2, 3, true);  // in place: chunks of 6, prompts longer than that
    o.decoding.block_size = 4;  // in place: the first round leaves most of each prompt cached
    auto engine = Engine::start(o);
    auto sink = std::make_shared<ScoringCollector>();
    std::vector<SeqId> ids;
    std::vector<SeqRequest> reqs;
    for (size_t i = 0; i < prompts.size(); ++i) {
      // Every other one asks for its prompt's logprobs (top 2), with max_tokens 0 or 3; the same
      // prompts again afterwards find them cached in place, which must not stand in for scoring.
      SeqRequest r{prompts[i], static_cast<int64_t>(i % 3 == 0 ? 0 : 3), {999999}};  // an EOS never met
      if (i % 2 == 0 || i % 3 == 0) r.prompt_logprobs = 2;
      reqs.push_back(r);
    }
    for (int round = 0; round < 2; ++round) {
      for (const SeqRequest& r : reqs) {
        const SubmitResult s = engine->submit(r, 0, sink);
        CATCH_REQUIRE(s.status == SubmitStatus::Ok);
        ids.push_back(s.id);
      }
      CATCH_REQUIRE(sink->wait_for(ids.size(), 120s));
    }
    const auto scored = sink->scored();
    const auto results = sink->results();
    for (size_t k = 0; k < ids.size(); ++k) {
      const SeqRequest& r = reqs[k % reqs.size()];
      CATCH_CHECK(results.at(ids[k]).tokens.size() == static_cast<size_t>(r.max_tokens));
      if (r.prompt_logprobs < 0) {
        CATCH_CHECK(scored.count(ids[k]) == 0);
        continue;
      }
      CATCH_REQUIRE(scored.count(ids[k]) == 1);
      CATCH_REQUIRE(scored.at(ids[k]).size() == 1);  // once
      CATCH_CHECK(sink->before_tokens(ids[k]));
      const auto& got = scored.at(ids[k])[0];
      const auto want = prompt_logprobs(*target, r.prompt, 2);
      CATCH_REQUIRE(got.size() == r.prompt.size() - 1);
      for (size_t t = 0; t < got.size(); ++t) {
        CATCH_CHECK(got[t].token == want[t].token);
        CATCH_CHECK(std::abs(got[t].logprob - want[t].logprob) < 1e-9);
        CATCH_REQUIRE(got[t].top.size() == want[t].top.size());
        for (size_t j = 0; j < got[t].top.size(); ++j) CATCH_CHECK(got[t].top[j].first == want[t].top[j].first);
      }
    }
    // A one-token prompt has nothing to score: an empty list, at once.
    const SubmitResult one = engine->submit([] {
      SeqRequest r{{5}, 0, {}};
      r.prompt_logprobs = 1;
      return r;
    }(), 0, sink);
    CATCH_REQUIRE(sink->wait_for(ids.size() + 1, 120s));
    CATCH_REQUIRE(sink->scored().at(one.id).size() == 1);
    CATCH_CHECK(sink->scored().at(one.id)[0].empty());
    engine->shutdown(true);
  }
}
