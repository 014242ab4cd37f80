#include "actors/model_pair.h"

#include <stdexcept>
#include <string>

#include "model/decoder.h"

namespace exspec {

void check_models(Mode mode, const Decoder& target, const Decoder* draft) {
  if (mode == Mode::NonSpec) return;
  if (!draft) throw std::invalid_argument(std::string(mode_name(mode)) + " needs a draft model");
  if (draft->config().vocab_size != target.config().vocab_size)
    throw std::invalid_argument("draft and target vocabularies differ (" + std::to_string(draft->config().vocab_size) +
                                " vs " + std::to_string(target.config().vocab_size) + ")");
}

}  // namespace exspec
