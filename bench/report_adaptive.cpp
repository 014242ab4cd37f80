// The adaptive-K sweep's part of the report: per pair, tokens/s by batch size for nonspec,
// exspec at each fixed K and auto in each of adaptive_modes, with each auto's margin over
// nonspec and over the best fixed K.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "bench/report.h"

namespace exspec {
using json = nlohmann::ordered_json;

namespace {

std::string fmt(double v, int prec = 1) { return fixed_point(v, prec); }

// The column of an auto run in this mode: "auto" (exspec, the paper's mode) or "inplace auto".
std::string auto_column(const std::string& mode) { return mode == "exspec" ? "auto" : mode + " auto"; }

// The column of a run: "nonspec", "K=3", "auto", "inplace auto".
std::string column(const json& r) {
  if (r["mode"] == "nonspec") return "nonspec";
  if (r.value("adaptive", false)) return auto_column(r["mode"].get<std::string>());
  return "K=" + std::to_string(r["draft_tokens"].get<int64_t>());
}

struct Row {
  std::map<std::string, const json*> cells;
};

// pair -> batch size -> column -> run
std::map<std::string, std::map<int64_t, Row>> table(const json& runs) {
  std::map<std::string, std::map<int64_t, Row>> t;
  for (const auto& r : runs)
    if (r["sweep"] == "adaptive") t[r.value("pair", "demo")][r["batch_size"].get<int64_t>()].cells[column(r)] = &r;
  return t;
}

std::vector<std::string> auto_columns(const json& config) {
  std::vector<std::string> c;
  for (const auto& m : config.value("adaptive_modes", json::array({"exspec"}))) c.push_back(auto_column(m.get<std::string>()));
  return c;
}

std::vector<std::string> columns(const json& config) {
  std::vector<std::string> c{"nonspec"};
  for (const auto& k : config["adaptive_k_values"]) c.push_back("K=" + std::to_string(k.get<int64_t>()));
  for (const std::string& m : auto_columns(config)) c.push_back(m);
  return c;
}

}  // namespace

std::string adaptive_markdown(const json& res) {
  const auto t = table(res["runs"]);
  if (t.empty()) return "";
  const auto cols = columns(res["config"]), autos = auto_columns(res["config"]);
  std::ostringstream o;
  o << "\n## Adaptive draft length (issue 9)\n\n"
       "tokens/s (median; spread in parentheses); the settings of a row take their passes in turn. auto: exspec auto. "
       "X/nonspec: the median of the per-round ratios; X/best: over the best fixed K's median. mean K: the K auto "
       "chose, averaged over its steps.\n";
  for (const auto& [pair, rows] : t) {
    o << "\n### " << pair << " pair\n\n| B |";
    for (const auto& c : cols) o << " " << c << " |";
    for (const auto& a : autos) o << " " << a << "/nonspec | " << a << "/best fixed | mean K (" << a << ") |";
    o << " acceptance (K=3) |\n|--:|";
    for (size_t i = 0; i < cols.size() + 3 * autos.size() + 1; ++i) o << "--:|";
    o << "\n";
    for (const auto& [B, row] : rows) {
      o << "| " << B << " |";
      double best_fixed = 0;
      for (const auto& c : cols) {
        auto it = row.cells.find(c);
        if (it == row.cells.end()) {
          o << " |";
          continue;
        }
        const double tps = (*it->second)["tokens_per_s"].get<double>();
        if (c.rfind("K=", 0) == 0) best_fixed = std::max(best_fixed, tps);
        o << " " << fmt(tps) << " (" << fmt(100 * (*it->second)["spread"].get<double>(), 0) << " %) |";
      }
      auto get = [&](const std::string& c) { auto it = row.cells.find(c); return it == row.cells.end() ? nullptr : it->second; };
      const json *n = get("nonspec"), *k3 = get("K=3");
      for (const auto& col : autos) {
        const json* a = get(col);
        const double at = a ? (*a)["tokens_per_s"].get<double>() : 0;
        o << " " << (a && n ? fmt(same_run_ratio(*a, *n), 2) : "") << " | "
          << (a && best_fixed > 0 ? fmt(at / best_fixed, 2) : "") << " | " << (a ? fmt((*a)["mean_draft_tokens"], 2) : "")
          << " |";
      }
      o << " " << (k3 ? fmt(100 * (*k3)["acceptance_rate"].get<double>(), 1) + " %" : "") << " |\n";
    }
  }
  return o.str();
}

std::string adaptive_plots(const json& res, const std::string& dir) {
  const auto t = table(res["runs"]);
  if (t.empty()) return "";
  const auto cols = columns(res["config"]);
  std::string gp;
  for (const auto& [pair, rows] : t) {
    std::ofstream f(dir + "/adaptive-" + pair + ".dat");
    f << "# B";
    for (const auto& c : cols) f << " " << c;
    f << "\n";
    for (const auto& [B, row] : rows) {
      f << B;
      for (const auto& c : cols) {
        auto it = row.cells.find(c);
        f << " " << (it == row.cells.end() ? std::string("NaN") : fmt((*it->second)["tokens_per_s"].get<double>()));
      }
      f << "\n";
    }
    gp += "set output \"adaptive-" + pair + ".png\"\nset title \"Adaptive K: tokens/s by batch size (" + pair +
          " pair)\"\nset ylabel \"tokens/s\"\nset yrange [*:*]\nplot ";
    for (size_t i = 0; i < cols.size(); ++i)
      gp += std::string(i ? ", " : "") + "\"adaptive-" + pair + ".dat\" u 1:" + std::to_string(i + 2) + " w lp t \"" +
            cols[i] + "\"" + (cols[i].find("auto") != std::string::npos ? " lw 3" : "");
    gp += "\n";
  }
  return gp;
}

}  // namespace exspec
