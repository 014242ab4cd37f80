// The server's own counters and latency histograms (http/metrics.h's Metrics keeps them under its
// lock; GET /metrics renders a copy): apart, so that the metric rows (http/metric_rows.h) read
// them without including the class that renders them.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace exspec::http {

class Histogram {
 public:
  static constexpr std::array<double, 14> kBounds{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                  0.25,  0.5,    1,     2.5,  5,     10,  30};
  void observe(double v);
  void write(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::array<uint64_t, kBounds.size()> counts_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

struct MetricCounters {
  std::map<std::pair<std::string, int>, uint64_t> requests;  // (endpoint, status)
  std::map<std::string, Histogram> latency;                  // by endpoint
  Histogram ttft, overhead, engine_time, claim_time;
  double request_cpu_s = 0;  // CPU seconds of request work on either lane (http/request_work.h)
  int64_t request_refused = 0;  // requests answered 429: the request-work queue was full
  int64_t prompt_tokens = 0, completion_tokens = 0, disconnects = 0, claimed = 0, reclaimed = 0, refused = 0;
};

}  // namespace exspec::http
