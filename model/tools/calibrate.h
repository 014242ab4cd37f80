// Timings of single operations at chosen shapes, for the step cost model's calibration at
// start-up (actors/jobs/calibration.h). Each returns the fastest of `reps` runs after a warm-up, in
// seconds, with the device synchronised (a value is read back to the host).
//
// A forward is timed as serving runs it: forward_slots over a KVStore (slots_forward), handed to
// the initial thread as the drafter and the verifier hand theirs (model/initial_thread.h) with
// `threads` OpenMP threads (0: the thread's own setting), the hand-over included. The paper's
// modes bring their own path (model/paper/paper_timings.h); nothing here runs the oracle's.
#pragma once
#include <cstdint>
#include <functional>

namespace exspec {

class Decoder;

// The fastest of reps runs of `run` after a warm-up (first-touch allocation, kernel selection).
double fastest(int reps, const std::function<void()>& run);

// One forward of `rows` x `tokens` new positions after `context` positions each row holds, built
// once and run again and again (every run writes the same positions and ends with a value read
// back to the host). last_only: logits at each row's last position only (the drafter's), else at
// every position (the verifier's).
using ForwardRun = std::function<void()>;
using ForwardPath =
    std::function<ForwardRun(const Decoder&, int64_t rows, int64_t tokens, int64_t context, bool last_only)>;
// Serving's forward: forward_slots, each row in its own slot (consecutive: the view serving reads most).
ForwardRun slots_forward(const Decoder& m, int64_t rows, int64_t tokens, int64_t context, bool last_only);

double time_forward(const Decoder& m, int64_t rows, int64_t tokens, int64_t context, int reps = 2,
                    const ForwardPath& path = slots_forward, int threads = 0, bool last_only = false);
// The share of the shorter of two phases that does not overlap when the verifier and the
// drafter hand them over at once, from two threads, as they do in the actor pipeline: a target
// forward of `rows` x (k + 1) tokens against k one-token draft forwards. 0: fully hidden; 1:
// they take turns (the initial thread runs one forward at a time; or cores, or one device
// queue, shared). Clamped to [0, 1]. Called on the initial thread before a command parks it
// (generate, bench: every forward will run there, one at a time), it is 1 without a run.
struct ForwardThreads {
  int target = 0, draft = 0;  // OpenMP threads each model's forwards get (0: the thread's own)
};
double overlap_serial_share(const Decoder& target, const Decoder& draft, int64_t rows, int64_t k, int64_t context,
                            int reps = 2, const ForwardPath& path = slots_forward, ForwardThreads threads = {});

// How often the draft predicts the target's next token, measured on the target's own greedy text:
// `rows` seeded random prompts of `prompt` tokens, `tokens` target tokens generated after each
// (one forward_slots a token), then one draft forward over each whole sequence. `agreed` of
// `positions` generated tokens were the draft's argmax too: the per-token acceptance alpha of
// greedy drafting, before any request.
struct AgreementSample {
  int64_t agreed = 0, positions = 0;
};
AgreementSample measure_agreement(const Decoder& target, const Decoder& draft, int64_t rows = 4, int64_t prompt = 8,
                                  int64_t tokens = 32, uint64_t seed = 1);

}  // namespace exspec
