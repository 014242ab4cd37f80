// Host-built index tensors (positions, masks, slots, token ids) onto the model's device without
// a host sync. A plain .to(cuda) from pageable memory waits for the copy, and so for every
// kernel queued before it: each forward's half dozen of them kept the host from running ahead
// of the GPU (docs/gpu.md). From pinned memory the copy is queued on the stream like a kernel;
// PyTorch's pinned-memory cache keeps the staging block until the copy has run. The bytes on the
// device are the same, so no output changes. On the CPU it is the plain .to().
// EXSPEC_BLOCKING_COPIES=1 brings the blocking copies back, to measure what they cost
// (scripts/gpu-check's *-sync bench modes).
#pragma once
#include <ATen/ATen.h>

#include <cstdlib>

namespace exspec {

inline at::Tensor to_device(const at::Tensor& t, const at::Device& device) {
  static const bool blocking = std::getenv("EXSPEC_BLOCKING_COPIES") != nullptr;
  if (blocking || !device.is_cuda() || !t.device().is_cpu()) return t.to(device);
  return t.pin_memory().to(device, /*non_blocking=*/true);
}

}  // namespace exspec
