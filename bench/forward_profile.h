// Where one decoder forward's time goes, per top-level operator (libtorch's profiler): calls,
// milliseconds per forward and share, so a slow forward is measured before it is "fixed".
#pragma once
#include <cstdint>
#include <string>

namespace exspec {

class Decoder;

void print_forward_profile(const Decoder& m, int64_t batch, int64_t tokens, int64_t context, const std::string& label);

}  // namespace exspec
