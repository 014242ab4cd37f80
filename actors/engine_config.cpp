#include "actors/engine_config.h"

#include <stdexcept>

namespace exspec {

Mode parse_mode(const std::string& n) {
  if (n == "nonspec") return Mode::NonSpec;
  if (n == "eqspec") return Mode::EqSpec;
  if (n == "exspec") return Mode::ExSpec;
  throw std::invalid_argument("unknown mode \"" + n + "\" (nonspec, eqspec, exspec)");
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::NonSpec: return "nonspec";
    case Mode::EqSpec: return "eqspec";
    case Mode::ExSpec: return "exspec";
  }
  return "?";
}

}  // namespace exspec
