#include "actors/model_pair.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/decoder.h"

namespace exspec {

void check_models(const EngineConfig& c, const Decoder& target, const Decoder* draft) {
  if (!drafts(c) || c.speculate == Speculate::Ngram) return;
  if (!draft) throw std::invalid_argument(std::string(mode_name(c.mode)) + " needs a draft model");
  if (draft->config().vocab_size != target.config().vocab_size)
    throw std::invalid_argument("draft and target vocabularies differ (" + std::to_string(draft->config().vocab_size) +
                                " vs " + std::to_string(target.config().vocab_size) + ")");
}

int64_t slot_capacity(const EngineConfig& c, const Decoder& target) {
  return (c.context > 0 ? c.context : target.config().max_position_embeddings) + largest_k(c);
}

int64_t fit_context(const EngineConfig& c, const Decoder& target, const Decoder* draft) {
  const int64_t want = c.context > 0 ? c.context : target.config().max_position_embeddings;
  if (c.kv_cache_bytes <= 0) return want;
  const int64_t per_position = target.kv_bytes_per_position() + (draft ? draft->kv_bytes_per_position() : 0);
  const int64_t positions = c.kv_cache_bytes / (std::max<int64_t>(1, c.slots) * per_position);
  const int64_t fits = positions - largest_k(c);
  constexpr int64_t kShortest = 16;
  if (fits < kShortest)
    throw std::invalid_argument("the KV cache budget (" + std::to_string(c.kv_cache_bytes) + " bytes) holds " +
                                std::to_string(std::max<int64_t>(0, fits)) + " positions a slot for " +
                                std::to_string(c.slots) + " slots (" + std::to_string(per_position) +
                                " bytes a position): give it more memory (--kv-cache-memory) or fewer slots (--slots)");
  return std::min(want, fits);
}

std::string slot_misfit(const EngineConfig& c, const Decoder& target, const SeqRequest& r) {
  if (c.mode != Mode::InPlace) return "";
  const int64_t need = static_cast<int64_t>(r.prompt.size()) + r.max_tokens, room = slot_capacity(c, target) - largest_k(c);
  if (need <= room) return "";
  return "prompt (" + std::to_string(r.prompt.size()) + " tokens) + max_tokens (" + std::to_string(r.max_tokens) +
         ") exceeds the engine's context of " + std::to_string(room) + " tokens";
}

std::shared_ptr<KVStore> make_store(const EngineConfig& c, const Decoder& target, const Decoder* model) {
  if (c.mode != Mode::InPlace || !model) return nullptr;
  return std::make_shared<KVStore>(model->new_store(c.slots, slot_capacity(c, target)));
}

}  // namespace exspec
