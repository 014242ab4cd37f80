// The model pair `exspec serve` and `exspec batch` use when no --model is given: the trained demo
// pair shipped in the repository's demo/ (see demo/README.md), else a seeded random pair that
// make-model writes once into the cache directory (a binary moved away from its source tree).
#pragma once
#include "config/settings.h"

namespace exspec {

// Points c at the demo pair (c.model is empty): its model, its draft unless c names one, and
// "demo" as the served name unless c names one (the README's requests name it). The shipped pair
// is looked for in EXSPEC_DEMO_DIR when set. `command` names the caller in what it prints.
void use_demo_pair(Settings& c, const char* command);

}  // namespace exspec
