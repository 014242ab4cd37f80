// Seeds the step cost model before the first request: a few forwards and copies at the corners
// of the shapes the engine will run (1 and B rows, 1 and K_max+1 tokens, short and long
// context), once per engine start, on the path the mode runs (in place: forward_slots) and where
// the roles run their forwards (the initial thread, with each model's thread count); the online
// fit takes over from there. make_policy also
// seeds the acceptance estimate with the draft's measured agreement with the target
// (model/tools/calibrate.h, measure_agreement): a fresh engine starts from the pair's real rate.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "actors/scheduler/draft_length.h"
#include "actors/scheduler/engine_config.h"
#include "model/tools/calibrate.h"

namespace exspec {

class Decoder;

// How a mode's work is timed. The default is in place: forward_slots, and no batch assembly and
// no realignment (their cost stays 0). The paper's modes bring theirs (actors/planners.h,
// mode_timings): the dense forward, and the repad and realignment of each model's cache.
struct ModeTimings {
  ForwardPath forward = slots_forward;
  std::function<double(const Decoder&, int64_t rows, int64_t context)> copy, gather;  // null in place
};

// draft null: drafts cost no forward (prompt lookup), only the target is measured.
void calibrate(StepCostModel& costs, const Decoder& target, const Decoder* draft, int64_t max_rows, int64_t max_k,
               const ModeTimings& mode = {}, ForwardThreads threads = {});

// The engine's draft-length policy (calibrated when adaptive); null when no step drafts (nonspec,
// in place without a draft model or lookup).
// pipelined: two batches in flight (the actor pipeline with overlap on). threads: what each
// model's forwards get on the initial thread (the engine's; 0: the calling thread's own).
std::shared_ptr<DraftLengthPolicy> make_policy(const EngineConfig& c, const Decoder& target, const Decoder* draft,
                                               bool pipelined, const ModeTimings& mode = {},
                                               ForwardThreads threads = {});

}  // namespace exspec
