// The models a decoding mode needs: the speculative modes need a draft that shares the target's
// vocabulary (its tokens are the target's candidates). Checked once, by every engine.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "actors/scheduler/engine_config.h"
#include "model/seq_request.h"

namespace exspec {

class Decoder;

// Throws std::invalid_argument saying what is missing or wrong (a configuration that drafts
// without a draft, vocabularies that differ).
void check_models(const EngineConfig& c, const Decoder& target, const Decoder* draft);

// In place: sizes the stores. Without a budget (c.kv_cache_bytes 0) each slot's row holds the
// context (c.context, 0: the target's max_position_embeddings) and the drafts a verification
// writes beyond the tokens it keeps (the largest K). With one, the rows share what the budget
// holds for both models' stores (at most that), in whole blocks, and the context is capped so
// that one sequence fits in all of them. Sets c.slot_positions and c.context (once resolved, again is
// a no-op); throws std::invalid_argument when the budget cannot hold a short sequence.
void fit_store(EngineConfig& c, const Decoder& target, const Decoder* draft);
// In place: why a request can never fit ("" when it can, and in the other modes).
std::string slot_misfit(const EngineConfig& c, const SeqRequest& r);

class KVStore;
// In place: the store of c.slots rows of c.slot_positions for `model` (null in the other modes).
std::shared_ptr<KVStore> make_store(const EngineConfig& c, const Decoder* model);

}  // namespace exspec
