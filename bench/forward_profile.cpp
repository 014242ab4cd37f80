#include "bench/forward_profile.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <vector>

#include "bench/forward_case.h"
#include "model/decoder.h"

namespace exspec {
namespace {

namespace prof = torch::autograd::profiler;

struct OpTotal {
  int64_t calls = 0;
  double us = 0;
};

// Inclusive time of the outermost operators only (what the decoder itself calls), from the
// push/pop pairs of the thread that ran the forward.
std::map<std::string, OpTotal> top_level(const prof::thread_event_lists& lists) {
  std::map<std::string, OpTotal> out;
  for (const auto& events : lists) {
    std::vector<const prof::LegacyEvent*> stack;
    for (const auto& e : events) {
      if (e.kind() == prof::EventKind::PushRange) {
        stack.push_back(&e);
      } else if (e.kind() == prof::EventKind::PopRange && !stack.empty()) {
        const prof::LegacyEvent* start = stack.back();
        stack.pop_back();
        if (!stack.empty()) continue;
        OpTotal& t = out[start->name()];
        t.calls += 1;
        t.us += start->cpuElapsedUs(e);
      }
    }
  }
  return out;
}

}  // namespace

void print_forward_profile(const Decoder& m, int64_t b, int64_t t, int64_t ctx, const std::string& label) {
  const int reps = 10;
  ForwardCase fc(m, b, t, ctx);
  fc.run();  // warm-up
  double wall_ms = 0;
  prof::thread_event_lists lists;
  {
    prof::TLSLegacyProfilerGuard guard(torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU),
                                       [&](const prof::thread_event_lists& l) { lists = l; });
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) fc.run();
    wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
  }
  auto totals = top_level(lists);
  std::vector<std::pair<std::string, OpTotal>> rows(totals.begin(), totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.second.us > y.second.us; });
  double ops_ms = 0;
  std::printf("\nprofile (%s, %s): batch %lld, %lld new tokens, context %lld: %.2f ms per forward (profiled)\n",
              label.c_str(), at::toString(m.dtype()), (long long)b, (long long)t, (long long)ctx, wall_ms);
  std::printf("%-36s %8s %10s %7s\n", "operator", "calls", "ms/fwd", "share");
  for (const auto& [name, tot] : rows) {
    const double ms = tot.us / 1e3 / reps;
    ops_ms += ms;
    std::printf("%-36s %8lld %10.3f %6.1f%%\n", name.c_str(), (long long)(tot.calls / reps), ms, 100 * ms / wall_ms);
  }
  std::printf("%-36s %8s %10.3f %6.1f%%\n", "(outside operators)", "", wall_ms - ops_ms,
              100 * (wall_ms - ops_ms) / wall_ms);
}

}  // namespace exspec
