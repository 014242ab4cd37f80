#include "actors/pool_manager.h"

#include <type_traits>
#include <unordered_map>

#include "actors/planners.h"
#include "actors/actor_handles.h"

namespace exspec {

struct PoolManagerState {
  PoolManagerSettings settings;
  std::shared_ptr<const ActorHandles> handles;
  std::shared_ptr<JobPlanner> jobs;  // the mode's planner, with its plans as jobs
  std::unordered_map<SeqId, std::shared_ptr<TokenSink>> sinks;
  bool shutting_down = false;
  caf::typed_response_promise<bool> shutdown_promise;
  bool promise_pending = false;
};

namespace {

using Self = pool_manager_actor::stateful_pointer<PoolManagerState>;

// The queue's count drops by what the window took in the same critical section that publishes the
// window's new size, so a reader (Engine::stats) never sees a sequence in neither gauge.
void publish(PoolManagerState& st) {
  Planner& s = st.jobs->planner();
  EngineStats e;
  e.totals = s.stats();
  e.active = s.active();
  e.submitted = s.submitted();
  e.finished = s.finished();
  e.cancelled = s.cancelled();
  e.slots = s.slots();
  e.slots_used = s.slots_used();
  e.blocks = s.blocks();
  if (s.policy()) e.speculation = s.policy()->estimates();
  std::lock_guard<std::mutex> lock(st.settings.board->mu);
  const size_t taken = s.take_dequeued();
  e.queued = st.settings.queued->fetch_sub(taken) - taken;
  st.settings.board->stats = e;
}

// Tells the sinks what the planner's last calls produced: after the stats are published, so
// that a producer that hears of a token or a finish sees stats that already count it.
void tell_sinks(PoolManagerState& st) {
  for (SeqEvent& e : st.jobs->planner().take_events()) {
    auto it = st.sinks.find(e.id);
    if (it == st.sinks.end()) continue;
    TokenSink& sink = *it->second;
    if (e.prompt_logprobs) sink.on_prompt_logprobs(e.id, *e.prompt_logprobs);
    if (!e.logprobs.empty()) sink.on_logprobs(e.id, e.logprobs);
    if (!e.origins.tokens.empty()) sink.on_origins(e.id, e.origins);
    if (!e.tokens.empty()) sink.on_tokens(e.id, e.tokens);
    if (e.finished) {
      sink.on_finish(e.id, *e.finished);
      st.sinks.erase(it);
    }
  }
}

// The end of every event: hand out the jobs the planner has ready, publish, tell the sinks,
// answer a shutdown once nothing is left.
void pump(Self self) {
  auto& st = self->state;
  for (JobPtr j = st.jobs->next(); j; j = st.jobs->next())
    start_job(self, *st.handles, std::move(j));
  publish(st);
  tell_sinks(st);
  // While the forwards run on their own threads: the next step chosen ahead of their results.
  st.jobs->planner().plan_ahead();
  if (st.shutting_down && st.promise_pending && st.jobs->planner().idle()) {
    st.promise_pending = false;
    st.shutdown_promise.deliver(true);
  }
}

void admit(PoolManagerState& st, SubmitMsg& m) {
  st.sinks[m.id] = m.sink;
  st.jobs->planner().admit(std::move(m.request), m.priority, m.id);
}

}  // namespace

pool_manager_actor spawn_pool_manager(caf::actor_system& system, PoolManagerSettings settings,
                                      std::shared_ptr<const ActorHandles> handles) {
  // Made here, on the caller's thread: a configuration it refuses throws from Engine::start,
  // where an exception inside the actor would leave an engine that never answers.
  std::shared_ptr<JobPlanner> jobs = make_planner(settings.decoding, settings.policy, settings.overlap ? 2 : 1);
  return system.spawn([settings, handles, jobs](Self self) -> pool_manager_actor::behavior_type {
    auto& st = self->state;
    st.settings = settings;
    st.handles = handles;
    st.jobs = jobs;
    return {
        [=](submit_atom, std::shared_ptr<SubmitMsg> m) {
          admit(self->state, *m);
          pump(self);
        },
        [=](submit_many_atom, std::shared_ptr<std::vector<SubmitMsg>> ms) {
          for (auto& m : *ms) admit(self->state, m);
          pump(self);
        },
        [=](cancel_atom, SeqId id, int reason) {
          self->state.jobs->planner().cancel(id, static_cast<FinishReason>(reason));
          pump(self);
        },
        [=](done_atom, JobPtr j) {
          self->state.jobs->done(std::move(j));
          pump(self);
        },
        [=](shutdown_atom, bool drain) -> caf::result<bool> {
          auto& st = self->state;
          st.shutting_down = true;
          if (!drain) st.jobs->planner().cancel_all();  // rows inside a step end at its boundary
          st.shutdown_promise = self->make_response_promise<bool>();
          st.promise_pending = true;
          pump(self);  // delivers at once when nothing is left
          return st.shutdown_promise;
        },
    };
  });
}

}  // namespace exspec
