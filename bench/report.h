// The bench report: derived figures, summary.md and plots from results.json's content.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace exspec {

// v with prec digits after the point ("%.*f").
std::string fixed_point(double v, int prec = 1);
// The median of v (the mean of the middle two when v has an even count; v not empty).
double median(std::vector<double> v);
// a's tokens/s over b's: the median of the per-round ratios when both ran the same number of
// rounds (settings of one table take their passes in turn, bench/harness.cpp), else the ratio of
// their medians; 0 when b has none.
double same_run_ratio(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b);
// Adds speedup (vs batch-1 nonspec) and scaling (vs the same mode at batch 1) to each main run.
void add_derived(nlohmann::ordered_json& results);
std::string summary_markdown(const nlohmann::ordered_json& results);
// Writes *.dat and plots.gp into out_dir and runs gnuplot when it is installed (PNG files).
// The adaptive-K sweep (bench/report_adaptive.cpp): its summary section, and gnuplot commands
// for its plots (data files written to dir).
std::string adaptive_markdown(const nlohmann::ordered_json& results);
// The in-place and trained sweeps (bench/report_inplace.cpp): their summary sections.
std::string inplace_markdown(const nlohmann::ordered_json& results);
std::string adaptive_plots(const nlohmann::ordered_json& results, const std::string& dir);
void write_plots(const nlohmann::ordered_json& results, const std::string& out_dir);

}  // namespace exspec
