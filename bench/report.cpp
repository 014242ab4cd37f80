#include "bench/report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "model/io_util.h"

namespace exspec {
using json = nlohmann::ordered_json;

namespace {

std::string fmt(double v, int prec = 1) { return fixed_point(v, prec); }
std::string pct(double v) { return fmt(100.0 * v, 1) + " %"; }

const json* find(const json& runs, const std::string& sweep, const std::string& mode, int64_t B) {
  for (const auto& r : runs)
    if (r["sweep"] == sweep && r["mode"] == mode && r["batch_size"] == B) return &r;
  return nullptr;
}

}  // namespace

std::string fixed_point(double v, int prec) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double same_run_ratio(const json& a, const json& b) {
  const auto& ra = a["tokens_per_s_runs"];
  const auto& rb = b["tokens_per_s_runs"];
  if (ra.size() == rb.size() && !ra.empty()) {
    std::vector<double> r;
    for (size_t i = 0; i < ra.size(); ++i)
      if (rb[i].get<double>() > 0) r.push_back(ra[i].get<double>() / rb[i].get<double>());
    if (r.size() == ra.size()) return median(std::move(r));
  }
  const double tb = b["tokens_per_s"].get<double>();
  return tb > 0 ? a["tokens_per_s"].get<double>() / tb : 0;
}

void add_derived(json& results) {
  json& runs = results["runs"];
  const json* base = find(runs, "main", "nonspec", 1);
  std::map<std::string, double> at1;
  for (const auto& r : runs)
    if (r["sweep"] == "main" && r["batch_size"] == 1) at1[r["mode"].get<std::string>()] = r["tokens_per_s"].get<double>();
  for (auto& r : runs) {
    const double tps = r["tokens_per_s"].get<double>();
    if (base) r["speedup"] = tps / (*base)["tokens_per_s"].get<double>();
    auto it = at1.find(r["mode"].get<std::string>());
    if (r["sweep"] == "main" && it != at1.end() && it->second > 0) r["scaling"] = tps / it->second;
  }
}

std::string summary_markdown(const json& res) {
  const json& m = res["machine"];
  const json& c = res["config"];
  const json& runs = res["runs"];
  std::ostringstream o;
  o << "# exspec bench\n\n"
    << "Machine: " << m["cpu"].get<std::string>() << ", " << m["cores"] << " cores, BLAS `"
    << m["blas"].get<std::string>() << "`, torch threads " << m["torch_threads"] << ", BLAS threads "
    << m["blas_threads"] << "; " << m["date"].get<std::string>() << ".\n"
    << "Models: `" << c["model"].get<std::string>() << "` (" << fmt(m["model_parameters"].get<double>() / 1e6)
    << "M parameters) and draft `" << c["draft"].get<std::string>() << "` ("
    << fmt(m["draft_parameters"].get<double>() / 1e6) << "M). " << c["prompts"] << " prompts, "
    << c["max_tokens"] << " new tokens each, " << c["dtype"].get<std::string>() << ", K = " << c["draft_tokens"]
    << ", W = 2B unless swept. Timings: median of " << c["repeats"]
    << " passes after a warm-up; spread = (max - min) / median.\n\n";

  o << "## Correctness (Table 1): match with batch-1 nonspec greedy\n\n"
    << "| mode | B | exact (" << c["dtype"].get<std::string>() << ") | partial | exact (float64 subset) |\n|---|--:|--:|--:|--:|\n";
  for (const auto& r : runs) {
    if (r["sweep"] != "main") continue;
    std::string f64 = "";
    for (const auto& q : runs)
      if (q["sweep"] == "float64" && q["mode"] == r["mode"] && q["batch_size"] == r["batch_size"]) f64 = pct(q["exact_match"]);
    o << "| " << r["mode"].get<std::string>() << " | " << r["batch_size"] << " | " << pct(r["exact_match"]) << " | "
      << pct(r["partial_match"]) << " | " << f64 << " |\n";
  }

  o << "\n## Throughput (Figure 5a)\n\n| mode | B | tokens/s | spread | speedup vs nonspec B=1 | scaling vs B=1 | acceptance | tokens/verify |\n"
       "|---|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& r : runs) {
    if (r["sweep"] != "main") continue;
    o << "| " << r["mode"].get<std::string>() << " | " << r["batch_size"] << " | " << fmt(r["tokens_per_s"]) << " | "
      << pct(r["spread"]) << " | " << fmt(r.value("speedup", 0.0), 2) << " | " << fmt(r.value("scaling", 0.0), 2)
      << " | " << pct(r["acceptance_rate"]) << " | " << fmt(r["tokens_per_verification"], 2) << " |\n";
  }

  const int64_t sb = c["sweep_batch"].get<int64_t>();
  o << "\n## Overhead anatomy at B = " << sb << " (Table 2)\n\n"
    << "| mode | tokens/s | verifications | ms/verification | verify | draft | alignment |\n|---|--:|--:|--:|--:|--:|--:|\n";
  for (const char* mode : {"eqspec", "exspec"})
    if (const json* r = find(runs, "main", mode, sb))
      o << "| " << mode << " | " << fmt((*r)["tokens_per_s"]) << " | " << (*r)["verify_calls"] << " | "
        << fmt((*r)["ms_per_verify"]) << " | " << pct((*r)["verify_share"]) << " | " << pct((*r)["draft_share"])
        << " | " << pct((*r)["overhead_share"]) << " |\n";

  o << "\n## Alignment overhead and grouping against batch size (Figure 5b, 5c)\n\n"
    << "| B | eqspec overhead | exspec overhead | exspec grouping (mixed lengths) | exspec grouping (equal lengths) |\n|--:|--:|--:|--:|--:|\n";
  for (const auto& b : c["batch_sizes"]) {
    const int64_t B = b.get<int64_t>();
    const json *eq = find(runs, "main", "eqspec", B), *ex = find(runs, "main", "exspec", B), *g = find(runs, "grouping", "exspec", B);
    o << "| " << B << " | " << (eq ? pct((*eq)["overhead_share"]) : "") << " | " << (ex ? pct((*ex)["overhead_share"]) : "")
      << " | " << (ex ? pct((*ex)["grouping_rate"]) : "") << " | " << (g ? pct((*g)["grouping_rate"]) : "") << " |\n";
  }

  o << "\n## exspec sweeps at B = " << sb << "\n\n| setting | tokens/s | acceptance | tokens/verify | grouping | overhead |\n|---|--:|--:|--:|--:|--:|\n";
  for (const auto& r : runs) {
    if (r["sweep"] != "window" && r["sweep"] != "draft_tokens") continue;
    const std::string what = r["sweep"] == "window" ? "W = " + std::to_string(r["window"].get<int64_t>())
                                                    : "K = " + std::to_string(r["draft_tokens"].get<int64_t>());
    o << "| " << what << " | " << fmt(r["tokens_per_s"]) << " | " << pct(r["acceptance_rate"]) << " | "
      << fmt(r["tokens_per_verification"], 2) << " | " << pct(r["grouping_rate"]) << " | " << pct(r["overhead_share"]) << " |\n";
  }
  o << adaptive_markdown(res);
  o << inplace_markdown(res);
  o << "\nEvery figure is also in results.json (one object per mode, batch size and setting).\n";
  return o.str();
}

void write_plots(const json& res, const std::string& dir) {
  const json& runs = res["runs"];
  for (const char* mode : {"nonspec", "eqspec", "exspec"}) {
    std::ofstream f(dir + "/" + mode + ".dat");
    f << "# B tokens_per_s overhead_share grouping_rate\n";
    for (const auto& r : runs)
      if (r["sweep"] == "main" && r["mode"] == mode)
        f << r["batch_size"] << " " << r["tokens_per_s"] << " " << r["overhead_share"] << " " << r["grouping_rate"] << "\n";
  }
  {
    std::ofstream f(dir + "/grouping-equal.dat");
    for (const auto& r : runs)
      if (r["sweep"] == "grouping") f << r["batch_size"] << " " << r["grouping_rate"] << "\n";
  }
  const std::string gp = R"(set terminal pngcairo size 800,500
set logscale x 2
set key left top
set grid
set xlabel "batch size"
set output "throughput.png"
set title "Output tokens/s by batch size"
set ylabel "tokens/s"
plot "nonspec.dat" u 1:2 w lp t "nonspec", "eqspec.dat" u 1:2 w lp t "eqspec", "exspec.dat" u 1:2 w lp t "exspec"
set output "overhead.png"
set title "Alignment overhead share by batch size"
set ylabel "share of step time"
plot "eqspec.dat" u 1:3 w lp t "eqspec", "exspec.dat" u 1:3 w lp t "exspec"
set output "grouping.png"
set title "exspec same-length grouping rate"
set ylabel "grouping rate"
set yrange [0:1.05]
plot "exspec.dat" u 1:4 w lp t "mixed lengths", "grouping-equal.dat" u 1:2 w lp t "equal lengths"
)";
  write_text_file(dir + "/plots.gp", gp + adaptive_plots(res, dir));
  const std::string cmd = "cd '" + dir + "' && gnuplot plots.gp 2>/dev/null";
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0 || std::system(cmd.c_str()) != 0)
    std::fprintf(stderr, "bench: gnuplot is not installed (scripts/setup installs gnuplot-nox); plots skipped, "
                         "data and plots.gp are in %s\n", dir.c_str());
}

}  // namespace exspec
