// The models a decoding mode needs: the speculative modes need a draft that shares the target's
// vocabulary (its tokens are the target's candidates). Checked once, by every engine.
#pragma once
#include "actors/engine_config.h"

namespace exspec {

class Decoder;

// Throws std::invalid_argument saying what is missing or wrong.
void check_models(Mode mode, const Decoder& target, const Decoder* draft);

}  // namespace exspec
