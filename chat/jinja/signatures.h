// The parameters of the builtins as Python declares them, so that a call Python would refuse
// (an unknown keyword, one too many positions, a missing required argument, a keyword to a
// positional-only method) fails here too instead of being ignored.
#pragma once
#include <string>

#include "chat/jinja/value.h"

namespace exspec::jinja {

// Throws std::runtime_error (Python's TypeError) when `args` do not fit. kind: "filter", "test"
// or "method" (a str, dict or list method); names without a fixed signature pass.
void check_signature(const char* kind, const std::string& name, const Args& args);

}  // namespace exspec::jinja
