// --draft-screen's values, torch-free so that config/ and actors/ name them as model/ does
// (model/screened_head.h is the screen itself).
#pragma once
#include <cstdint>

namespace exspec {

// --draft-screen auto: kAutoScreenCandidates candidates where screen_pays (an int8 head whose
// screen saves a ninth or more of a draft token's bytes), else off. A count >= 1 keeps that many; 0 is off.
constexpr int64_t kScreenAuto = -1;
constexpr int64_t kAutoScreenCandidates = 16;

}  // namespace exspec
