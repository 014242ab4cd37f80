// Timings of single operations at chosen shapes, for the step cost model's calibration at
// start-up (actors/calibration.h). Each returns the fastest of `reps` runs after a warm-up, in
// seconds, with the device synchronised (a value is read back to the host).
#pragma once
#include <cstdint>

namespace exspec {

class Decoder;

// One forward of `rows` x `tokens` new positions over a cache already holding `context` positions.
double time_forward(const Decoder& m, int64_t rows, int64_t tokens, int64_t context, int reps = 2);
// Repad: stacking `rows` single-sequence caches of `context` positions into a batch (assemble).
double time_repad(const Decoder& m, int64_t rows, int64_t context, int reps = 2);
// Realign: unpad-append-repad of a `rows` x `context` cache with holes (after a ragged step).
double time_realign(const Decoder& m, int64_t rows, int64_t context, int reps = 2);

}  // namespace exspec
