// The CUDA build's device timeline (model/device_timeline.h). Each forward records an event on
// the current stream at its start and one at its end; finished pairs are summed as later
// forwards arrive (cudaEventQuery, no wait), so the list stays short while serving.
#ifndef EXSPEC_WITH_CUDA
#error "model/device_timeline_cuda.cpp is the CUDA build's (EXSPEC_WITH_CUDA)"
#endif
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "model/device_timeline.h"

namespace exspec::device_timeline {
namespace {

using Event = std::shared_ptr<at::cuda::CUDAEvent>;

struct Timeline {
  std::mutex mu;
  bool on = false;
  // Forwards open at once (the drafter's and the verifier's, on their own threads): their
  // overlap is one busy stretch, from the first one's start to the last one's end.
  int depth = 0;
  Event open;     // the running forward's start
  Event first, last;
  std::deque<std::pair<Event, Event>> pending;
  int64_t forwards = 0;
  double busy_ms = 0;

  void settle(bool wait) {
    while (!pending.empty()) {
      auto& [a, b] = pending.front();
      if (wait) b->synchronize();
      else if (!b->query()) return;
      busy_ms += a->elapsed_time(*b);
      ++forwards;
      pending.pop_front();
    }
  }
};

Timeline& timeline() {
  static Timeline t;
  return t;
}

Event record() {
  auto e = std::make_shared<at::cuda::CUDAEvent>(cudaEventDefault);  // timing on
  e->record(c10::cuda::getCurrentCUDAStream());
  return e;
}

}  // namespace

void enable(bool on) {
  Timeline& t = timeline();
  std::lock_guard<std::mutex> lock(t.mu);
  t.on = on;
  t.depth = 0;
  t.open.reset(), t.first.reset(), t.last.reset();
  t.pending.clear();
  t.forwards = 0, t.busy_ms = 0;
}

void begin(bool cuda) {
  if (!cuda) return;
  Timeline& t = timeline();
  std::lock_guard<std::mutex> lock(t.mu);
  if (!t.on || t.depth++ > 0) return;
  t.open = record();
  if (!t.first) t.first = t.open;
}

void end(bool cuda) noexcept {
  if (!cuda) return;
  Timeline& t = timeline();
  std::lock_guard<std::mutex> lock(t.mu);
  if (!t.on || t.depth == 0 || --t.depth > 0 || !t.open) return;
  try {
    t.last = record();
    t.pending.emplace_back(std::move(t.open), t.last);
    t.settle(/*wait=*/false);
  } catch (...) {  // a CUDA error here is the forward's to report: timing stops, serving goes on
    t.on = false;
  }
  t.open.reset();
}

Reading read() {
  Timeline& t = timeline();
  std::lock_guard<std::mutex> lock(t.mu);
  Reading r;
  t.settle(/*wait=*/true);
  if (!t.on || !t.first || !t.last) return r;
  r.recorded = true;
  r.forwards = t.forwards;
  r.busy_ms = t.busy_ms;
  r.span_ms = t.first->elapsed_time(*t.last);
  return r;
}

}  // namespace exspec::device_timeline
