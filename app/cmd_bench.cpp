#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/args.h"
#include "app/commands.h"
#include "bench/harness.h"
#include "model/io_util.h"
#include "model/tools/make_model.h"
#include "model/runtime.h"

namespace exspec {

int cmd_bench(int argc, char** argv, int first) {
  Args a(argc, argv, first, {"config", "out", "model", "draft", "threads"}, {"help", "quick"});
  if (a.has("help")) {
    std::cout << "exspec bench [--config FILE.json] [--quick] --out DIR [--model DIR --draft DIR]\n"
                 "runs every mode and batch size on the prompt sets; writes DIR/results.json, DIR/summary.md\n"
                 "and plots. Defaults: the demo pair (models/demo, made on first use), ~10 minutes on 2\n"
                 "cores; --quick ~1 minute. Config keys: see bench/README.md; figures and how to reproduce\n"
                 "them: docs/performance.md.\n";
    return 0;
  }
  BenchConfig cfg = a.has("quick") ? BenchConfig::quick() : BenchConfig{};
  if (a.has("config")) cfg.apply_json(read_text_file(a.get("config", "")));
  cfg.model = a.get("model", cfg.model);
  cfg.draft = a.get("draft", cfg.draft);
  if (a.has("threads")) cfg.blas_threads = static_cast<int>(a.get_int("threads", 0));
  const std::string out = a.need("out");
  // The generated pairs are made on first use: the demo pair, and the same target shape with
  // weaker damping, whose 1-layer draft is rarely accepted (the adaptive sweep's low pair).
  auto ensure_pair = [](const std::string& model, const std::string& draft, const std::string& default_dir, double damp) {
    if (std::filesystem::exists(model + "/config.json")) return;
    if (model != default_dir) throw std::invalid_argument(model + ": no config.json");
    std::cerr << "bench: making " << model << " and " << draft << " (first use)\n";
    MakeModelOptions o;
    o.preset = "demo";
    o.seed = 1;
    o.out = model;
    o.damp_std = damp;
    make_model(o);
    make_draft(model, 1, draft);
  };
  ensure_pair(cfg.model, cfg.draft, "models/demo", -1);
  if (std::find(cfg.sweeps.begin(), cfg.sweeps.end(), "adaptive") != cfg.sweeps.end())
    ensure_pair(cfg.low_model, cfg.low_draft, "models/demo-low", 0.002);
  check_blas();
  const auto t0 = std::chrono::steady_clock::now();
  run_bench(cfg, out, [&](int done, int total, const std::string& label) {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int width = 30, fill = total ? width * done / total : width;
    std::fprintf(stderr, "\r[%s%s] %d/%d %5.0fs  %-60.60s", std::string(fill, '#').c_str(),
                 std::string(width - fill, '.').c_str(), done, total, el, label.c_str());
    std::fflush(stderr);
  });
  std::fprintf(stderr, "\nbench: wrote %s/results.json and %s/summary.md\n", out.c_str(), out.c_str());
  return 0;
}

}  // namespace exspec
