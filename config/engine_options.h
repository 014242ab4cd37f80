// The engine's options from the settings: the mode resolved, batch, window and slots defaulted,
// the KV budget measured. Serve, batch and generate all start their engine from here.
#pragma once
#include "actors/engine.h"
#include "config/settings.h"

namespace exspec {

// Throws std::invalid_argument naming the setting for values its parser refuses.
EngineOptions engine_options(const Settings& s);
// EngineOptions::initial_threads from threads.torch: the same count when set to other than its
// default 1, else 0 (every core). Never throws, unlike engine_options().
int initial_threads_setting(const Settings& s);

}  // namespace exspec
