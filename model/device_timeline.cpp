// The device timeline where there is no CUDA (model/device_timeline.h): nothing is recorded. The
// CUDA build's is model/device_timeline_cuda.cpp.
#include "model/device_timeline.h"

#ifndef EXSPEC_WITH_CUDA
namespace exspec::device_timeline {

void enable(bool) {}
void begin(bool) {}
void end(bool) noexcept {}
Reading read() { return {}; }

}  // namespace exspec::device_timeline
#endif
