// The rows of GET /metrics (http/metric_table.h): what one answer reads, and the engine's rows,
// which http/engine_metrics.cpp holds apart from the server's own (http/metrics.cpp). Internal to
// http/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "http/metric_table.h"
#include "actors/engine.h"
#include "http/metric_counters.h"
#include "http/process_stats.h"

namespace exspec::http {

// What one /metrics answer reads: the server's counters (copied under the lock), the process,
// and the engine's snapshot (null while loading).
struct ServerView {
  const MetricCounters& c;
  const ProcessStats& p;
  int64_t inflight;
  const EngineStats* e;
  const ModelInfo* info;
  const std::string &served_name, &mode, &draft_tokens;
};

// The engine's rows: the model, the queue and window, the KV stores, steps and drafts, the
// prefix cache and timings. Shown once the engine is loaded.
std::vector<MetricRow<ServerView>> engine_rows();
// Drafts by temperature band and by proposer, the prefix cache and the timings, draft lengths, and
// adaptive K's estimates.
std::vector<MetricRow<ServerView>> speculation_rows();

}  // namespace exspec::http
