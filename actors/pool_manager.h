// pool-manager: owns the SequencePool and the window; admits, forms batches, routes them
// through realigner -> drafter -> verifier -> realigner, writes results back, emits deltas to
// sinks, refills the window. Holds no tensors itself: only the opaque per-sequence states.
#pragma once
#include <atomic>
#include <memory>

#include "actors/messages.h"

namespace exspec {

struct Route;

struct PoolManagerSettings {
  EngineConfig decoding;
  bool overlap = true;
  // Shared with the engine front: sequences admitted but not yet in the window (queue bound).
  std::shared_ptr<std::atomic<size_t>> queued;
};

pool_manager_actor spawn_pool_manager(caf::actor_system& system, PoolManagerSettings settings,
                                      std::shared_ptr<const Route> route);

}  // namespace exspec
