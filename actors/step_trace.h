// EXSPEC_TRACE=1: every draft-length choice and every step's predicted against measured phase
// times, one line each on stderr (README, "Adaptive draft length").
#pragma once
#include <cstdint>

#include "actors/draft_length.h"
#include "actors/plan.h"

namespace exspec {

bool trace_enabled();
void trace_choice(const DraftLengthPolicy& policy, const BatchOutlook& o, bool reused, int64_t chosen);
void trace_step(const DraftLengthPolicy& policy, const StepShape& s, const StepTimes& t, bool grouped);

}  // namespace exspec
