// The long-prompt stall (issue 18): while 8 sequences decode, a long prompt arrives; how much
// does it raise their longest gap between two tokens? In place, the prompt is stored in chunks
// between decode steps, so the rise should stay within one chunk's forward; the paper's modes
// prefill it whole.
#pragma once
#include <nlohmann/json.hpp>

#include "bench/bench_config.h"

namespace exspec {

// Per mode (inplace, exspec): the decoding sequences' longest gap without and with the long
// prompt (median over cfg.repeats), and the time of one prefill chunk's forward.
nlohmann::ordered_json run_gap(const BenchConfig& cfg);

}  // namespace exspec
