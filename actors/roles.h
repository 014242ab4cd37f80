// The pipeline's roles as typed actors (one file each). Drafter and verifier own a model each
// and are spawned detached: a forward pass blocks its thread for milliseconds.
#pragma once
#include <memory>

#include "actors/messages.h"

namespace exspec {

class Decoder;
struct Route;

drafter_actor::behavior_type drafter(drafter_actor::pointer self, std::shared_ptr<const Decoder> model,
                                     std::shared_ptr<const Route> route);
verifier_actor::behavior_type verifier(verifier_actor::pointer self, std::shared_ptr<const Decoder> model,
                                       std::shared_ptr<const Route> route);
realigner_actor::behavior_type realigner(realigner_actor::pointer self, std::shared_ptr<const Route> route);

}  // namespace exspec
