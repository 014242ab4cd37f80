// The handles of the pipeline's actors, filled once at start (before any message flows) and
// shared by all of them, so that each actor can pass a job to the next role.
#pragma once
#include "actors/jobs/job.h"
#include "actors/messages.h"

namespace exspec {

struct ActorHandles {
  pool_manager_actor pool_manager;
  realigner_actor realigner;
  drafter_actor drafter;
  verifier_actor verifier;
};

// A job's path (actors/messages.h), one hop at a time: a role with nothing to do for the job is
// skipped, as each hop is another thread's wake-up (a plain in-place step with no slot to move
// goes pool-manager -> verifier -> pool-manager).
// After the realigner's assemble (or in its place): the draft model's forward, else the target's.
template <class Self>
void to_forward(Self* self, const ActorHandles& h, JobPtr j) {
  if (j->drafts()) self->send(h.drafter, draft_atom::value, std::move(j));
  else self->send(h.verifier, verify_atom::value, std::move(j));
}

// From the pool-manager: the realigner when the job has something to assemble.
template <class Self>
void start_job(Self* self, const ActorHandles& h, JobPtr j) {
  if (j->assembles()) self->send(h.realigner, assemble_atom::value, std::move(j));
  else to_forward(self, h, std::move(j));
}

// After the verifier's forward: the realigner's split when the job has one, else back home.
template <class Self>
void finish_job(Self* self, const ActorHandles& h, JobPtr j) {
  if (j->splits()) self->send(h.realigner, split_atom::value, std::move(j));
  else self->send(h.pool_manager, done_atom::value, std::move(j));
}

}  // namespace exspec
