// Timings of single operations at chosen shapes, for the step cost model's calibration at
// start-up (actors/jobs/calibration.h). Each returns the fastest of `reps` runs after a warm-up, in
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
// The share of the shorter of two phases that does not overlap when they run at once on two
// threads, as the verifier and the drafter do in the actor pipeline: a target forward of
// `rows` x (k + 1) tokens against k one-token draft forwards. 0: fully hidden; 1: they
// serialise (cores or one device queue shared). Clamped to [0, 1].
double overlap_serial_share(const Decoder& target, const Decoder& draft, int64_t rows, int64_t k, int64_t context,
                            int reps = 2);

// How often the draft predicts the target's next token, measured on the target's own greedy text:
// `rows` seeded random prompts of `prompt` tokens, `tokens` target tokens generated after each,
// then one draft forward over each whole sequence. `agreed` of `positions` generated tokens were
// the draft's argmax too: the per-token acceptance alpha of greedy drafting, before any request.
struct AgreementSample {
  int64_t agreed = 0, positions = 0;
};
AgreementSample measure_agreement(const Decoder& target, const Decoder& draft, int64_t rows = 4, int64_t prompt = 8,
                                  int64_t tokens = 32, uint64_t seed = 1);

}  // namespace exspec
