// The handles of the pipeline's actors, filled once at start (before any message flows) and
// shared by all of them, so that each actor can pass a job to the next role.
#pragma once
#include "actors/messages.h"

namespace exspec {

struct ActorHandles {
  pool_manager_actor pool_manager;
  realigner_actor realigner;
  drafter_actor drafter;
  verifier_actor verifier;
};

}  // namespace exspec
