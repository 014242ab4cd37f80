// The pipeline's working roles as typed actors (actors/roles.cpp; the fourth, the pool-manager,
// is actors/pool_manager.h). Drafter and verifier own a model each and are spawned detached: a
// forward pass blocks its thread for milliseconds.
#pragma once
#include <memory>

#include "actors/messages.h"

namespace exspec {

class Decoder;
class KVStore;
struct ActorHandles;

// store: the model's in-place KV store (Mode::InPlace; null otherwise), written only by this role.
// threads: the OpenMP count its forwards get on the initial thread (model/initial_thread.h).
drafter_actor::behavior_type drafter(drafter_actor::pointer self, std::shared_ptr<const Decoder> model,
                                     std::shared_ptr<const ActorHandles> handles, std::shared_ptr<KVStore> store,
                                     int threads);
verifier_actor::behavior_type verifier(verifier_actor::pointer self, std::shared_ptr<const Decoder> model,
                                       std::shared_ptr<const ActorHandles> handles, std::shared_ptr<KVStore> store,
                                       int threads);
// stores: both models' in-place KV stores (null in the paper's modes), for slot moves only: the
// slots a move copies belong to the job it holds, so no forward touches them meanwhile.
realigner_actor::behavior_type realigner(realigner_actor::pointer self, std::shared_ptr<const ActorHandles> handles,
                                         std::shared_ptr<KVStore> target_store, std::shared_ptr<KVStore> draft_store);

}  // namespace exspec
