// exspec bench: runs prompt sets through every mode and batch size on the actor pipeline and
// writes results.json, summary.md and plots (the paper's Table 1/Table 2 and Figure 5 on our pairs).
#pragma once
#include <functional>
#include <string>

#include "bench/bench_config.h"

namespace exspec {

// Runs everything, writing OUT/results.json, OUT/summary.md and OUT/*.png (when gnuplot is
// installed). `progress` gets (done, total, label) after every run.
void run_bench(const BenchConfig& cfg, const std::string& out_dir,
               const std::function<void(int, int, const std::string&)>& progress);

}  // namespace exspec
