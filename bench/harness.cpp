#include "bench/harness.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "actors/collector.h"
#include "actors/engine.h"
#include "bench/gap.h"
#include "bench/report.h"
#include "model/decoder.h"
#include "model/oracle/plain_decode.h"
#include "model/initial_thread.h"
#include "model/io_util.h"
#include "model/runtime.h"

namespace exspec {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::vector<int64_t>> load_prompts(const std::string& path, int n) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot open prompt set");
  std::vector<std::vector<int64_t>> out;
  std::string line;
  while (static_cast<int>(out.size()) < n && std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line).at("prompt_ids").get<std::vector<int64_t>>());
  if (out.empty()) throw std::invalid_argument(path + ": no prompts");
  return out;
}

constexpr int64_t kAuto = -1;  // Setting::k of adaptive runs

struct Setting {
  std::string sweep, prompt_set, mode, dtype;
  int64_t batch = 1, k = 0, window = 0;  // k: kAuto = draft_tokens "auto"
  const std::vector<std::vector<int64_t>>* prompts = nullptr;
  int64_t max_tokens = 0;
  int repeats = 1;
  std::string pair = "demo";  // "demo": model/draft; "low": low_model/low_draft; "trained"
  std::string label() const {
    return sweep + " " + mode + " B=" + std::to_string(batch) +
           (k == kAuto ? " K=auto" : k ? " K=" + std::to_string(k) : "") +
           (window ? " W=" + std::to_string(window) : "") + " " + prompt_set + " " + dtype +
           (pair != "demo" ? " (" + pair + " pair)" : "");
  }
};

std::string model_of(const BenchConfig& cfg, const std::string& pair) {
  return pair == "low" ? cfg.low_model : pair == "trained" ? cfg.trained_model : cfg.model;
}
std::string draft_of(const BenchConfig& cfg, const std::string& pair) {
  return pair == "low" ? cfg.low_draft : pair == "trained" ? cfg.trained_draft : cfg.draft;
}

// One setting's engine between its timed passes. The settings that one table compares (same
// sweep, pair, batch size and prompts) live at once and take their passes in turn, round by
// round: on a shared machine, load that comes and goes then falls on every setting alike, and
// each round gives a ratio taken at one time (same_run_ratio in bench/report.h).
struct Live {
  const Setting* s = nullptr;
  EngineOptions o;
  std::unique_ptr<Engine> engine;
  std::vector<double> tps;
  std::vector<RunStats> runs;
  std::vector<SeqResult> results;  // of the first pass
};

// Submits the first n prompts and waits for every result.
std::vector<SeqResult> pass(Live& l, size_t n, int64_t max_tokens) {
  auto sink = std::make_shared<Collector>();
  std::vector<SeqId> ids;
  std::vector<SeqRequest> reqs;
  for (size_t i = 0; i < n; ++i) reqs.push_back(SeqRequest{(*l.s->prompts)[i], max_tokens, {}});
  const InitialThreadPark park;  // the first jobs wait for it (model/initial_thread.h)
  for (const SubmitResult& r : l.engine->submit_many(std::move(reqs), 0, sink)) {
    if (r.status != SubmitStatus::Ok) throw std::runtime_error(l.s->label() + ": " + r.message);
    ids.push_back(r.id);
  }
  // Meanwhile this (initial) thread runs the forwards, as in serve and generate
  // (model/initial_thread.h).
  const auto deadline = Clock::now() + std::chrono::hours(1);
  bool all = false;
  auto done = [&] {
    all = sink->wait_for(ids.size(), std::chrono::milliseconds(0));
    return all || Clock::now() > deadline;
  };
  serve_on_initial_thread(done, initial_threads(l.o.initial_threads));
  if (!all) throw std::runtime_error(l.s->label() + ": timed out");
  std::vector<SeqResult> out;
  auto got = sink->results();
  for (SeqId id : ids) out.push_back(got.at(id));
  return out;
}

// A fresh engine for the setting, warmed up with one short pass.
Live start_setting(const BenchConfig& cfg, const Setting& s) {
  Live l;
  l.s = &s;
  EngineOptions& o = l.o;
  o.model_dir = model_of(cfg, s.pair);
  o.draft_dir = s.mode == "nonspec" ? "" : draft_of(cfg, s.pair);
  o.dtype = s.dtype;
  o.decoding.mode = parse_mode(s.mode);
  o.decoding.batch_size = s.batch;
  o.decoding.draft_tokens = s.k > 0 ? s.k : 1;
  o.decoding.adaptive_k = s.k == kAuto;
  o.decoding.window = o.decoding.slots = s.window > 0 ? s.window : 2 * s.batch;  // W, or in place the slots
  o.decoding.prefill_chunk = cfg.prefill_chunk;
  // Every pass sends the same prompts: with the prefix cache, in place would find them in the
  // slots the warm-up and the passes before left, and the comparison with the paper's modes
  // would measure the cache, not the decoding (bench/multiturn.sh measures the cache).
  o.decoding.prefix_cache = false;
  for (const auto& p : *s.prompts)  // in place: slots as long as this set's longest sequence
    o.decoding.context = std::max<int64_t>(o.decoding.context, static_cast<int64_t>(p.size()) + s.max_tokens);
  o.overlap = cfg.overlap;
  o.max_queue = s.prompts->size() + 16;
  o.blas_threads = cfg.blas_threads;
  o.torch_threads = cfg.torch_threads;
  l.engine = Engine::start(o);
  pass(l, std::min<size_t>(s.prompts->size(), static_cast<size_t>(s.batch)), 4);  // warm-up
  return l;
}

// One timed pass over the whole prompt set.
void timed_pass(Live& l) {
  const RunStats before = l.engine->stats().totals;
  const auto t0 = Clock::now();
  std::vector<SeqResult> got = pass(l, l.s->prompts->size(), l.s->max_tokens);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  RunStats d = diff(l.engine->stats().totals, before);
  d.wall_s = wall;
  l.tps.push_back(d.tokens_per_s());
  l.runs.push_back(d);
  if (l.results.empty()) l.results = std::move(got);
}

json finish_setting(Live& l, const std::vector<SeqResult>& oracle) {
  const Setting& s = *l.s;
  const EngineOptions& o = l.o;
  const std::vector<double>& tps = l.tps;
  const std::vector<RunStats>& runs = l.runs;
  const std::vector<SeqResult>& results = l.results;
  const SpeculationEstimates est = l.engine->stats().speculation;
  l.engine->shutdown(true);
  l.engine.reset();

  const double med = median(tps);
  const RunStats& st = runs[std::min_element(tps.begin(), tps.end(), [&](double a, double b) {
                              return std::abs(a - med) < std::abs(b - med);
                            }) - tps.begin()];
  double exact = 0, partial = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& a = results[i].tokens;
    const auto& b = oracle[i].tokens;
    exact += a == b;
    size_t n = 0;
    while (n < std::min(a.size(), b.size()) && a[n] == b[n]) ++n;
    partial += b.empty() ? 1.0 : static_cast<double>(n) / static_cast<double>(b.size());
  }
  const double step_s = st.draft_s + st.verify_s + st.align_s;
  json estimates = json::object();
  if (est.adaptive) {
    estimates["acceptance"] = est.acceptance;
    for (const auto& [name, v] : est.coefficients) estimates["cost." + name] = v;
  }
  return json{{"sweep", s.sweep},
              {"pair", s.pair},
              {"prompt_set", s.prompt_set},
              {"mode", s.mode},
              {"dtype", s.dtype},
              {"batch_size", s.batch},
              {"draft_tokens", s.mode == "nonspec" ? 0 : std::max<int64_t>(s.k, 0)},
              {"adaptive", s.k == kAuto},
              {"mean_draft_tokens", st.mean_k()},
              {"k_steps", st.k_steps},
              {"estimates", estimates},
              {"window", s.mode == "exspec" || s.mode == "inplace" ? o.decoding.window : 0},
              {"prompts", results.size()},
              {"max_tokens", s.max_tokens},
              {"tokens_per_s", med},
              {"tokens_per_s_runs", tps},
              {"spread", med > 0 ? (*std::max_element(tps.begin(), tps.end()) - *std::min_element(tps.begin(), tps.end())) / med : 0},
              {"exact_match", exact / results.size()},
              {"partial_match", partial / results.size()},
              {"acceptance_rate", st.acceptance_rate()},
              {"tokens_per_verification", st.tokens_per_verification()},
              {"grouping_rate", st.grouping_rate()},
              {"overhead_share", st.overhead_share()},
              {"verify_share", step_s > 0 ? st.verify_s / step_s : 0},
              {"draft_share", step_s > 0 ? st.draft_s / step_s : 0},
              {"verify_calls", st.steps},
              {"ms_per_verify", st.steps ? 1000.0 * st.verify_s / st.steps : 0},
              {"reused_steps", st.reused_steps},
              {"output_tokens", st.committed}};
}

std::vector<SeqResult> oracle_for(const std::string& model, const std::string& dtype,
                                  const std::vector<std::vector<int64_t>>& prompts, int64_t max_tokens) {
  auto m = Decoder::load(model, {parse_dtype(dtype), at::kCPU});
  std::vector<SeqRequest> reqs;
  for (const auto& p : prompts) reqs.push_back(SeqRequest{p, max_tokens, m->config().eos_ids});
  return plain_decode(*m, reqs, 1);
}

json machine(const BenchConfig& cfg) {
  std::string cpu = "unknown";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  auto m = Decoder::load(cfg.model, {at::kFloat, at::kCPU});
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return json{{"cpu", cpu},
              {"cores", std::thread::hardware_concurrency()},
              {"blas", blas_library()},
              {"torch_threads", cfg.torch_threads},
              {"blas_threads", cfg.blas_threads > 0 ? cfg.blas_threads : static_cast<int>(std::thread::hardware_concurrency())},
              {"date", date},
              {"model_parameters", m->num_parameters()},
              {"draft_parameters", Decoder::load(cfg.draft, {at::kFloat, at::kCPU})->num_parameters()}};
}

}  // namespace

void run_bench(const BenchConfig& cfg, const std::string& out_dir,
               const std::function<void(int, int, const std::string&)>& progress) {
  fs::create_directories(out_dir);
  configure_threads(cfg.torch_threads, cfg.blas_threads);
  const auto mixed_all = load_prompts(cfg.mixed_prompts, std::max(cfg.prompts, cfg.adaptive_prompts));
  const std::vector<std::vector<int64_t>> mixed(mixed_all.begin(), mixed_all.begin() + std::min<size_t>(mixed_all.size(), cfg.prompts));
  const auto equal = load_prompts(cfg.equal_prompts, cfg.prompts);
  const std::vector<std::vector<int64_t>> f64(mixed.begin(), mixed.begin() + std::min<size_t>(mixed.size(), cfg.f64_prompts));

  const std::vector<std::vector<int64_t>> adaptive(mixed_all.begin(), mixed_all.begin() + std::min<size_t>(mixed_all.size(), cfg.adaptive_prompts));
  auto wanted = [&](const char* sweep) { return std::find(cfg.sweeps.begin(), cfg.sweeps.end(), sweep) != cfg.sweeps.end(); };
  std::vector<Setting> settings;
  auto add = [&](std::string sweep, std::string set, std::string mode, std::string dtype, int64_t B, int64_t K,
                 int64_t W, const std::vector<std::vector<int64_t>>* p, int64_t max_tokens, int repeats,
                 const char* pair = "demo") {
    if (wanted(sweep.c_str())) settings.push_back(Setting{sweep, set, mode, dtype, B, K, W, p, max_tokens, repeats, pair});
  };
  for (int64_t B : cfg.batch_sizes)
    for (const char* mode : {"nonspec", "eqspec", "exspec"})
      add("main", "mixed", mode, cfg.dtype, B, std::string(mode) == "nonspec" ? 0 : cfg.draft_tokens, 0, &mixed,
          cfg.max_tokens, cfg.repeats);
  for (int64_t B : cfg.batch_sizes) add("grouping", "equal", "exspec", cfg.dtype, B, cfg.draft_tokens, 0, &equal, cfg.max_tokens, cfg.repeats);
  for (int64_t W : cfg.windows)
    if (W >= cfg.sweep_batch) add("window", "mixed", "exspec", cfg.dtype, cfg.sweep_batch, cfg.draft_tokens, W, &mixed, cfg.max_tokens, cfg.repeats);
  for (int64_t K : cfg.k_values) add("draft_tokens", "mixed", "exspec", cfg.dtype, cfg.sweep_batch, K, 0, &mixed, cfg.max_tokens, cfg.repeats);
  for (int64_t B : cfg.f64_batch_sizes)
    for (const char* mode : {"nonspec", "eqspec", "exspec", "inplace"})
      add("float64", "mixed", mode, "float64", B, std::string(mode) == "nonspec" ? 0 : cfg.draft_tokens, 0, &f64,
          cfg.f64_max_tokens, 1);

  for (const char* pair : {"demo", "low"})
    for (int64_t B : cfg.adaptive_batch_sizes) {
      std::vector<int64_t> ks{0};
      ks.insert(ks.end(), cfg.adaptive_k_values.begin(), cfg.adaptive_k_values.end());
      std::vector<std::pair<std::string, int64_t>> modes;  // mode, K
      for (int64_t K : ks) modes.emplace_back(K == 0 ? "nonspec" : "exspec", K);
      for (const std::string& mode : cfg.adaptive_modes) modes.emplace_back(mode, kAuto);
      for (const auto& [mode, K] : modes)
        add("adaptive", "adaptive", mode, cfg.dtype, B, K, 0, &adaptive, cfg.max_tokens, cfg.repeats, pair);
    }

  // The in-place and trained sweeps compare the same four settings (bench/report_inplace.cpp).
  const std::vector<std::pair<const char*, int64_t>> inplace_modes{
      {"nonspec", 0}, {"exspec", cfg.draft_tokens}, {"inplace", cfg.draft_tokens}, {"inplace", kAuto}};
  for (int64_t B : cfg.inplace_batch_sizes)
    for (const auto& [mode, K] : inplace_modes)
      add("inplace", "adaptive", mode, cfg.dtype, B, K, 0, &adaptive, cfg.max_tokens, cfg.repeats);

  const auto trained = wanted("trained") ? load_prompts(cfg.trained_prompts, cfg.adaptive_prompts)
                                         : std::vector<std::vector<int64_t>>{};
  for (int64_t B : cfg.trained_batch_sizes)
    for (const auto& [mode, K] : inplace_modes)
      add("trained", "trained", mode, cfg.dtype, B, K, 0, &trained, cfg.trained_max_tokens, cfg.repeats, "trained");

  // The oracle of every (pair, prompt set, dtype) that a setting needs.
  std::map<std::string, std::vector<SeqResult>> oracles;
  auto key = [](const Setting& s) { return s.pair + "/" + s.prompt_set + "/" + s.dtype; };
  std::vector<const Setting*> oracle_needed;
  for (const auto& s : settings)
    if (!oracles.count(key(s))) {
      oracles[key(s)];
      oracle_needed.push_back(&s);
    }
  const int total = static_cast<int>(settings.size() + oracle_needed.size());
  int done = 0;
  for (const Setting* s : oracle_needed) {
    progress(done++, total, "oracle (batch-1 nonspec, " + key(*s) + ")");
    oracles[key(*s)] = oracle_for(model_of(cfg, s->pair), s->dtype, *s->prompts, s->max_tokens);
  }
  progress(done, total, settings.empty() ? "" : settings[0].label());

  json runs = json::array();
  auto same_table = [](const Setting& a, const Setting& b) {
    return a.sweep == b.sweep && a.pair == b.pair && a.batch == b.batch && a.prompt_set == b.prompt_set &&
           a.dtype == b.dtype && a.repeats == b.repeats;
  };
  for (size_t i = 0; i < settings.size();) {
    size_t end = i + 1;
    while (end < settings.size() && same_table(settings[i], settings[end])) ++end;
    std::vector<Live> group;
    for (size_t j = i; j < end; ++j) group.push_back(start_setting(cfg, settings[j]));
    const size_t n = group.size();
    for (int r = 0; r < settings[i].repeats; ++r)  // each round starts one setting later
      for (size_t j = 0; j < n; ++j) timed_pass(group[(j + static_cast<size_t>(r)) % n]);
    for (size_t j = 0; j < n; ++j) {
      runs.push_back(finish_setting(group[j], oracles.at(key(settings[i + j]))));
      progress(++done, total, i + j + 1 < settings.size() ? settings[i + j + 1].label() : "writing the report");
    }
    i = end;
  }
  json results{{"machine", machine(cfg)}, {"config", json::parse(cfg.to_json())}, {"runs", runs}};
  if (wanted("gap")) {
    progress(done, total, "gap: a 1000-token prompt joining 8 decoding sequences");
    results["gap"] = run_gap(cfg);
  }
  add_derived(results);
  write_text_file(out_dir + "/results.json", results.dump(2) + "\n");
  write_text_file(out_dir + "/summary.md", summary_markdown(results));
  write_plots(results, out_dir);
}

}  // namespace exspec
