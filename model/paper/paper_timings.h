// The paper's modes timed for the step cost model (actors/jobs/calibration.h), beside serving's
// (model/tools/calibrate.h): their forward is the dense one over a KVCache
// (model/oracle/dense_forward.h), and their batches are copied (repad) and gathered (realign),
// which in place never happens.
#pragma once
#include <cstdint>

#include "model/tools/calibrate.h"

namespace exspec {

// The dense forward of `rows` x `tokens` after `context` cached positions (a ForwardPath).
ForwardRun dense_forward_run(const Decoder& m, int64_t rows, int64_t tokens, int64_t context, bool last_only);
// Repad: stacking `rows` single-sequence caches of `context` positions into a batch (assemble).
double time_repad(const Decoder& m, int64_t rows, int64_t context, int reps = 2);
// Realign: unpad-append-repad of a `rows` x `context` cache with holes (after a ragged step).
double time_realign(const Decoder& m, int64_t rows, int64_t context, int reps = 2);

}  // namespace exspec
