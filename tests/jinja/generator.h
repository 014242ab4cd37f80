// A seeded generator of small Jinja templates over every construct the interpreter supports
// (operators on mixed types, filters with keyword arguments, tests, str/dict methods, loops with
// loop.*, macros with defaults, varargs, kwargs and *args/**kwargs calls, call and filter blocks,
// namespaces, whitespace control) and of errors, for the differential test against
// python3-jinja2. Its own integer draws (splitmix64, no std::uniform_*_distribution): a seed gives
// the same cases wherever the compiler evaluates operands in the same order (GCC: always).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tests/jinja/support.h"

namespace exspec::jinjatest {

std::vector<Case> generate_cases(uint64_t seed, size_t count);

}  // namespace exspec::jinjatest
