// How busy the device was across the forwards on the serving stores (issue 60): CUDA events
// around each forward, read back without waiting while serving, so that the host's time between
// steps shows up as device idle time. A CUDA build records; elsewhere nothing is recorded and
// read() says so (recorded = false). Off until enabled (`exspec generate --stats` enables it once
// the engine has started, after the graphs' warm-up).
#pragma once
#include <cstdint>

namespace exspec::device_timeline {

struct Reading {
  bool recorded = false;  // false: not a CUDA build, not enabled, or no forward ran on a GPU
  int64_t forwards = 0;   // forwards timed
  double busy_ms = 0;     // sum over forwards of the device time from its first to its last kernel
  double span_ms = 0;     // the device's time from the first forward's start to the last one's end
  double idle_fraction() const { return span_ms > 0 ? 1.0 - busy_ms / span_ms : 0.0; }
};

void enable(bool on);  // from now on (clears what was recorded)
// Called by Decoder::forward_slots around each forward; `cuda`: whether the model is on a GPU.
void begin(bool cuda);
void end(bool cuda) noexcept;  // an error reading the events drops the reading, never the forward
Reading read();  // waits for the device to finish what was recorded

// Times one forward: begin() on construction, end() on destruction.
class Scope {
 public:
  explicit Scope(bool cuda) : cuda_(cuda) { begin(cuda_); }
  ~Scope() { end(cuda_); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  bool cuda_;
};

}  // namespace exspec::device_timeline
