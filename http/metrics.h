// The server's own counters and latency histograms, and the Prometheus text exposition of them
// together with the engine's figures (GET /metrics). Thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "actors/engine.h"
#include "grammar/grammar_cache.h"
#include "grammar/grammar_service.h"
#include "http/metric_counters.h"

namespace exspec::http {

class Metrics {
 public:
  void request_done(const std::string& endpoint, int status, double seconds);
  // A generation that ran: tokens, time to first token (0: none), time inside the engine and the
  // server's own time (everything else: parsing, tokenizing, detokenizing, JSON).
  void generation_done(int64_t prompt_tokens, int64_t completion_tokens, double ttft_s, double engine_s,
                       double overhead_s);
  void client_disconnected();
  // A shared job store handed this replica `lines` batch lines (`reclaimed` of them after another
  // holder's lease expired) in one claim that took `seconds`.
  void batch_lines_claimed(int64_t lines, int64_t reclaimed, double seconds);
  // A connection answered 503 at once because the server was at limits.max_connections.
  void connection_refused();
  // CPU seconds one request's work took (parsing, validating, template, tokenizing).
  void request_work(double cpu_seconds);
  // A request answered 429 because the request-work queue was full.
  void request_work_refused();

  // Prometheus text format 0.0.4. `engine` may be null (still loading). /metrics is not behind the
  // API key: the model is labelled with its served name (the draft with its directory's last
  // component), never with a path on the server.
  std::string render(const EngineStats* engine, const ModelInfo* info, const std::string& served_name,
                     const std::string& mode, const std::string& draft_tokens, int64_t inflight) const;

  // What render() copies under the lock and reads after it (http/metric_counters.h).
  using Counters = MetricCounters;

 private:
  mutable std::mutex mu_;
  Counters c_;
};

// Structured output's compiled-grammar cache in Prometheus text: lookups that found a grammar,
// compiles and their seconds, the grammars kept and their bytes as compiled; the compile pool's
// cancelled, over-budget and refused compiles and its queue.
std::string grammar_cache_metrics(const grammar::GrammarService::Stats& s);

// What clients see of a model directory: its last component, never the path on the server.
std::string model_label(const std::string& dir);

// The exposition with label="value" added to every sample (a replica's name, so that the samples
// of several replicas stay apart where they are collected together).
std::string with_label(const std::string& text, const std::string& label, const std::string& value);

}  // namespace exspec::http
