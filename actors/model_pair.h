// The models a decoding mode needs: the speculative modes need a draft that shares the target's
// vocabulary (its tokens are the target's candidates). Checked once, by every engine.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "actors/engine_config.h"
#include "model/generation.h"

namespace exspec {

class Decoder;

// Throws std::invalid_argument saying what is missing or wrong (a configuration that drafts
// without a draft, vocabularies that differ).
void check_models(const EngineConfig& c, const Decoder& target, const Decoder* draft);

// In place: the positions of one slot: the context (0: the target's max_position_embeddings)
// plus the drafts a verification writes beyond the tokens it keeps (the largest K).
int64_t slot_capacity(const EngineConfig& c, const Decoder& target);
// In place: the context the slots get: c.context (0: the target's max_position_embeddings),
// capped by c.kv_cache_bytes (0: no cap) so that c.slots slots of both models' stores fit.
// Throws std::invalid_argument when the budget cannot hold even a short sequence per slot.
int64_t fit_context(const EngineConfig& c, const Decoder& target, const Decoder* draft);
// In place: why a request cannot live in a slot ("" when it can, and in the other modes).
std::string slot_misfit(const EngineConfig& c, const Decoder& target, const SeqRequest& r);

class KVStore;
// In place: a store of c.slots slots for `model` (null in the other modes).
std::shared_ptr<KVStore> make_store(const EngineConfig& c, const Decoder& target, const Decoder* model);

}  // namespace exspec
