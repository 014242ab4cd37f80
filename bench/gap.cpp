#include "bench/gap.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "actors/collector.h"
#include "actors/engine.h"
#include "model/paper/paper_timings.h"
#include "model/tools/calibrate.h"
#include "model/decoder.h"
#include "model/runtime.h"

namespace exspec {
namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

// A sink that stamps every delivery: the longest gap between two deliveries of one sequence.
class GapSink : public Collector {
 public:
  void on_tokens(SeqId id, const std::vector<int64_t>& delta) override {
    Collector::on_tokens(id, delta);
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = Clock::now();
    auto it = last_.find(id);
    if (it != last_.end()) gap_[id] = std::max(gap_[id], std::chrono::duration<double>(now - it->second).count());
    last_[id] = now;
    ++count_[id];
  }
  double longest(const std::vector<SeqId>& ids) {
    std::lock_guard<std::mutex> lock(mu_);
    double g = 0;
    for (SeqId id : ids) g = std::max(g, gap_[id]);
    return g;
  }
  size_t fewest(const std::vector<SeqId>& ids) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = SIZE_MAX;
    for (SeqId id : ids) n = std::min(n, count_[id]);
    return n;
  }

 private:
  std::mutex mu_;
  std::map<SeqId, Clock::time_point> last_;
  std::map<SeqId, double> gap_;
  std::map<SeqId, size_t> count_;
};

constexpr int kDecoding = 8;
constexpr int64_t kDecodeTokens = 64;

// One run: 8 short sequences decode; with `long_prompt`, a 1000-token prompt arrives once each
// has had a few deliveries. Returns the 8's longest gap between two deliveries, in seconds.
double one_run(Engine& engine, int64_t long_prompt, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> tok(3, 250);
  auto sink = std::make_shared<GapSink>();
  std::vector<SeqRequest> reqs;
  for (int i = 0; i < kDecoding; ++i) {
    std::vector<int64_t> p(8 + i);
    for (auto& t : p) t = tok(rng);
    reqs.push_back(SeqRequest{p, kDecodeTokens, {-1}});  // no EOS: every sequence runs its length
  }
  std::vector<SeqId> ids;
  for (const auto& r : engine.submit_many(reqs, 1, sink)) ids.push_back(r.id);
  while (sink->fewest(ids) < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (long_prompt > 0) {
    std::vector<int64_t> p(static_cast<size_t>(long_prompt));
    for (auto& t : p) t = tok(rng);
    const SubmitResult r = engine.submit(SeqRequest{p, 4, {-1}}, 1, sink);
    if (r.status != SubmitStatus::Ok) throw std::runtime_error("gap: the long prompt was refused: " + r.message);
  }
  if (!sink->wait_for(ids.size() + (long_prompt > 0 ? 1 : 0), std::chrono::minutes(10)))
    throw std::runtime_error("gap: timed out");
  return sink->longest(ids);
}

}  // namespace

json run_gap(const BenchConfig& cfg) {
  json out = json::array();
  auto m = Decoder::load(cfg.model, {parse_dtype(cfg.dtype), at::kCPU});
  // 1000 tokens, or what the model's positions allow (tiny test models have 512).
  const int64_t L = std::min<int64_t>(1000, m->config().max_position_embeddings - kDecodeTokens - 16);
  for (const char* mode : {"inplace", "exspec"}) {
    EngineOptions o;
    o.model_dir = cfg.model;
    o.draft_dir = cfg.draft;
    o.dtype = cfg.dtype;
    o.decoding.mode = parse_mode(mode);
    o.decoding.batch_size = kDecoding;
    o.decoding.draft_tokens = cfg.draft_tokens;
    o.decoding.adaptive_k = false;
    o.decoding.window = o.decoding.slots = kDecoding + 1;  // the long prompt joins at once
    o.decoding.context = L + kDecodeTokens;
    o.decoding.prefill_chunk = cfg.prefill_chunk;
    o.overlap = cfg.overlap;
    o.blas_threads = cfg.blas_threads;
    o.torch_threads = cfg.torch_threads;
    auto engine = Engine::start(o);
    one_run(*engine, 0, 1);  // warm-up
    std::vector<double> base, with;
    for (int r = 0; r < std::max(1, cfg.repeats); ++r) {
      base.push_back(one_run(*engine, 0, 10 + r));
      with.push_back(one_run(*engine, L, 10 + r));
    }
    engine->shutdown(true);
    std::sort(base.begin(), base.end());
    std::sort(with.begin(), with.end());
    // The yardstick: the dearest chunk's forward, the last one, which attends over the most
    // positions (the rise is the longest gap's, so it is that chunk's that counts).
    const int64_t chunk = std::min<int64_t>(cfg.prefill_chunk, L);
    const ForwardPath path =
        mode == std::string("inplace") ? ForwardPath(slots_forward) : ForwardPath(dense_forward_run);
    const double chunk_s = time_forward(*m, 1, chunk, L - chunk, 3, path);
    const double whole_s = time_forward(*m, 1, L, 0, 2, path);
    out.push_back(json{{"mode", mode},
                       {"decoding", kDecoding},
                       {"long_prompt", L},
                       {"prefill_chunk", mode == std::string("inplace") ? cfg.prefill_chunk : L},
                       {"longest_gap_s_without", base[base.size() / 2]},
                       {"longest_gap_s_with", with[with.size() / 2]},
                       {"runs_without", base},
                       {"runs_with", with},
                       {"rise_s", with[with.size() / 2] - base[base.size() / 2]},
                       {"chunk_forward_s", chunk_s},
                       {"whole_prompt_forward_s", whole_s}});
  }
  return out;
}

}  // namespace exspec
