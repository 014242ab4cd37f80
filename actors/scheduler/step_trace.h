// EXSPEC_TRACE=1: every draft-length choice and every step's predicted against measured phase
// times, one line each on stderr (README, "Adaptive draft length").
#pragma once
#include <cstdint>

#include "actors/scheduler/draft_length.h"
#include "actors/scheduler/plan.h"

namespace exspec {

bool trace_enabled();
void trace_choice(const DraftLengthPolicy& policy, const BatchOutlook& o, bool reused, int64_t chosen);
// policy null (nonspec): measured times only. Every line of a step or prefill carries the
// milliseconds since the engine's scheduler started (trace_engine), so that a trace shows
// where a pass's wall time goes.
void trace_step(const DraftLengthPolicy* policy, const StepShape& s, const StepTimes& t, bool grouped);
void trace_engine(const char* mode, int64_t batch, int64_t window, bool adaptive, int64_t k);
void trace_prefill(size_t rows, double seconds);
// In place: a newcomer's slot and how much of its prompt each store already held there.
void trace_slot(int64_t slot, int64_t prompt, int64_t target_kept, int64_t draft_kept);

}  // namespace exspec
