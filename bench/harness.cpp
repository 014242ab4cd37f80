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
#include "bench/report.h"
#include "model/decoder.h"
#include "model/greedy.h"
#include "model/io_util.h"
#include "model/runtime.h"

namespace exspec {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

BenchConfig BenchConfig::quick() {
  BenchConfig c;
  c.prompts = 8;
  c.max_tokens = 16;
  c.batch_sizes = {1, 4, 8};
  c.repeats = 1;
  c.windows = {8, 16};
  c.k_values = {1, 5};
  c.f64_prompts = 4;
  c.f64_max_tokens = 8;
  c.f64_batch_sizes = {4};
  return c;
}

void BenchConfig::apply_json(const std::string& text) {
  json j = json::parse(text);
  auto take = [&](const char* k, auto& field) {
    if (j.contains(k)) field = j[k].get<std::decay_t<decltype(field)>>();
  };
  take("model", model), take("draft", draft), take("mixed_prompts", mixed_prompts);
  take("equal_prompts", equal_prompts), take("prompts", prompts), take("max_tokens", max_tokens);
  take("dtype", dtype), take("batch_sizes", batch_sizes), take("draft_tokens", draft_tokens);
  take("repeats", repeats), take("sweep_batch", sweep_batch), take("windows", windows);
  take("k_values", k_values), take("f64_prompts", f64_prompts), take("f64_max_tokens", f64_max_tokens);
  take("f64_batch_sizes", f64_batch_sizes), take("overlap", overlap), take("blas_threads", blas_threads);
  take("torch_threads", torch_threads);
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!json::parse(to_json()).contains(it.key())) throw std::invalid_argument("unknown bench config key \"" + it.key() + "\"");
}

std::string BenchConfig::to_json() const {
  json j{{"model", model},           {"draft", draft},
         {"mixed_prompts", mixed_prompts}, {"equal_prompts", equal_prompts},
         {"prompts", prompts},       {"max_tokens", max_tokens},
         {"dtype", dtype},           {"batch_sizes", batch_sizes},
         {"draft_tokens", draft_tokens}, {"repeats", repeats},
         {"sweep_batch", sweep_batch}, {"windows", windows},
         {"k_values", k_values},     {"f64_prompts", f64_prompts},
         {"f64_max_tokens", f64_max_tokens}, {"f64_batch_sizes", f64_batch_sizes},
         {"overlap", overlap},       {"blas_threads", blas_threads},
         {"torch_threads", torch_threads}};
  return j.dump(2);
}

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

struct Setting {
  std::string sweep, prompt_set, mode, dtype;
  int64_t batch = 1, k = 0, window = 0;
  const std::vector<std::vector<int64_t>>* prompts = nullptr;
  int64_t max_tokens = 0;
  int repeats = 1;
  std::string label() const {
    return sweep + " " + mode + " B=" + std::to_string(batch) + (k ? " K=" + std::to_string(k) : "") +
           (window ? " W=" + std::to_string(window) : "") + " " + prompt_set + " " + dtype;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One setting: a fresh engine, a warm-up, then `repeats` timed passes over the prompt set.
json run_setting(const BenchConfig& cfg, const Setting& s, const std::vector<SeqResult>& oracle) {
  EngineOptions o;
  o.model_dir = cfg.model;
  o.draft_dir = s.mode == "nonspec" ? "" : cfg.draft;
  o.dtype = s.dtype;
  o.decoding.mode = parse_mode(s.mode);
  o.decoding.batch_size = s.batch;
  o.decoding.draft_tokens = s.k > 0 ? s.k : 1;
  o.decoding.window = s.window > 0 ? s.window : 2 * s.batch;
  o.overlap = cfg.overlap;
  o.max_queue = s.prompts->size() + 16;
  o.blas_threads = cfg.blas_threads;
  o.torch_threads = cfg.torch_threads;
  auto engine = Engine::start(o);
  auto pass = [&](size_t n, int64_t max_tokens, std::vector<SeqResult>* out) {
    auto sink = std::make_shared<Collector>();
    std::vector<SeqId> ids;
    std::vector<SeqRequest> reqs;
    for (size_t i = 0; i < n; ++i) reqs.push_back(SeqRequest{(*s.prompts)[i], max_tokens, {}});
    for (const SubmitResult& r : engine->submit_many(std::move(reqs), 0, sink)) {
      if (r.status != SubmitStatus::Ok) throw std::runtime_error(s.label() + ": " + r.message);
      ids.push_back(r.id);
    }
    if (!sink->wait_for(ids.size(), std::chrono::hours(1))) throw std::runtime_error(s.label() + ": timed out");
    if (out) {
      auto got = sink->results();
      for (SeqId id : ids) out->push_back(got.at(id));
    }
  };
  pass(std::min<size_t>(s.prompts->size(), static_cast<size_t>(s.batch)), 4, nullptr);  // warm-up

  std::vector<double> tps;
  std::vector<RunStats> runs;
  std::vector<SeqResult> results;
  for (int r = 0; r < s.repeats; ++r) {
    const RunStats before = engine->stats().totals;
    std::vector<SeqResult> got;
    const auto t0 = Clock::now();
    pass(s.prompts->size(), s.max_tokens, &got);
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    RunStats d = engine->stats().totals;
    d = diff(d, before);
    d.wall_s = wall;
    tps.push_back(d.tokens_per_s());
    runs.push_back(d);
    if (r == 0) results = std::move(got);
  }
  engine->shutdown(true);

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
  return json{{"sweep", s.sweep},
              {"prompt_set", s.prompt_set},
              {"mode", s.mode},
              {"dtype", s.dtype},
              {"batch_size", s.batch},
              {"draft_tokens", s.mode == "nonspec" ? 0 : s.k},
              {"window", s.mode == "exspec" ? o.decoding.window : 0},
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

std::vector<SeqResult> oracle_for(const BenchConfig& cfg, const std::string& dtype,
                                  const std::vector<std::vector<int64_t>>& prompts, int64_t max_tokens) {
  auto m = Decoder::load(cfg.model, {parse_dtype(dtype), at::kCPU});
  std::vector<SeqRequest> reqs;
  for (const auto& p : prompts) reqs.push_back(SeqRequest{p, max_tokens, m->config().eos_ids});
  return greedy_generate(*m, reqs, 1);
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
  const auto mixed = load_prompts(cfg.mixed_prompts, cfg.prompts);
  const auto equal = load_prompts(cfg.equal_prompts, cfg.prompts);
  const std::vector<std::vector<int64_t>> f64(mixed.begin(), mixed.begin() + std::min<size_t>(mixed.size(), cfg.f64_prompts));

  std::vector<Setting> settings;
  auto add = [&](std::string sweep, std::string set, std::string mode, std::string dtype, int64_t B, int64_t K,
                 int64_t W, const std::vector<std::vector<int64_t>>* p, int64_t max_tokens, int repeats) {
    settings.push_back(Setting{sweep, set, mode, dtype, B, K, W, p, max_tokens, repeats});
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
    for (const char* mode : {"nonspec", "eqspec", "exspec"})
      add("float64", "mixed", mode, "float64", B, std::string(mode) == "nonspec" ? 0 : cfg.draft_tokens, 0, &f64,
          cfg.f64_max_tokens, 1);

  const int total = static_cast<int>(settings.size()) + 3;  // + the three oracles
  int done = 0;
  progress(done, total, "oracle (batch-1 nonspec, " + cfg.dtype + ", mixed)");
  std::map<std::string, std::vector<SeqResult>> oracles;
  oracles["mixed/" + cfg.dtype] = oracle_for(cfg, cfg.dtype, mixed, cfg.max_tokens);
  progress(++done, total, "oracle (equal)");
  oracles["equal/" + cfg.dtype] = oracle_for(cfg, cfg.dtype, equal, cfg.max_tokens);
  progress(++done, total, "oracle (float64 subset)");
  oracles["mixed/float64"] = oracle_for(cfg, "float64", f64, cfg.f64_max_tokens);
  progress(++done, total, settings.empty() ? "" : settings[0].label());

  json runs = json::array();
  for (size_t i = 0; i < settings.size(); ++i) {
    runs.push_back(run_setting(cfg, settings[i], oracles.at(settings[i].prompt_set + "/" + settings[i].dtype)));
    progress(++done, total, i + 1 < settings.size() ? settings[i + 1].label() : "writing the report");
  }
  json results{{"machine", machine(cfg)}, {"config", json::parse(cfg.to_json())}, {"runs", runs}};
  add_derived(results);
  write_text_file(out_dir + "/results.json", results.dump(2) + "\n");
  write_text_file(out_dir + "/summary.md", summary_markdown(results));
  write_plots(results, out_dir);
}

}  // namespace exspec
