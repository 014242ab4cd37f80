// The process's own figures that Prometheus clients export (the client libraries' "process"
// collector: resident and virtual memory, start time, CPU time, open and maximum descriptors),
// read from /proc on Linux. Elsewhere `known` is false and /metrics leaves them out.
#pragma once
#include <cstdint>

namespace exspec::http {

struct ProcessStats {
  bool known = false;
  int64_t resident_bytes = 0, virtual_bytes = 0;
  double start_time_seconds = 0;  // since the Unix epoch
  double cpu_seconds = 0;         // user and system
  int64_t open_fds = 0, max_fds = 0;
};

ProcessStats read_process_stats();

}  // namespace exspec::http
