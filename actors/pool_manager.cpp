#include "actors/pool_manager.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "actors/batch_former.h"
#include "actors/route.h"
#include "actors/sequence_pool.h"
#include "actors/step_job.h"
#include "actors/window.h"

namespace exspec {

struct PoolManagerState {
  PoolManagerSettings settings;
  std::shared_ptr<const Route> route;
  SequencePool pool;
  std::unique_ptr<Window> window;
  std::unique_ptr<BatchFormer> former;
  std::unordered_map<SeqId, std::shared_ptr<TokenSink>> sinks;
  std::unordered_map<SeqId, FinishReason> cancel_pending;  // cancelled while inside a job
  std::unordered_set<SeqId> busy;                          // inside a job (prefill or step)
  std::deque<SeqId> to_prefill;                            // in the window, not prefilled yet
  int jobs = 0;                                            // jobs in flight (prefill + step)
  bool prefilling = false;
  int64_t step = 0, serial = 0;
  RunStats totals;
  size_t submitted = 0, finished = 0, cancelled = 0;
  // Sink notifications of the current event, delivered after the stats are published, so that
  // a producer that hears of a token or a finish sees stats that already count it.
  std::vector<std::function<void()>> outbox;
  bool shutting_down = false;
  caf::typed_response_promise<bool> shutdown_promise;
  bool promise_pending = false;
  // The pipeline's pace (adaptive K): when the last step completed, and whether the pipeline
  // was full of steps then.
  std::chrono::steady_clock::time_point last_done;
  bool last_full = false;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();  // for the trace
};

namespace {

using Self = pool_manager_actor::stateful_pointer<PoolManagerState>;

bool fixed_batches(const PoolManagerState& st) { return st.settings.decoding.mode != Mode::ExSpec; }
int max_jobs(const PoolManagerState& st) { return st.settings.overlap ? 2 : 1; }

void notify_finish(PoolManagerState& st, SeqId id, FinishReason reason, const std::string& error = "") {
  Sequence& s = st.pool.at(id);
  SeqResult r;
  r.tokens = s.generated;
  r.logprobs = s.logprobs;
  r.finish = s.status == SeqStatus::Finished && s.finish != FinishReason::None ? s.finish : reason;
  r.error = error;
  if (r.finish == FinishReason::None) ++st.cancelled;
  else ++st.finished;
  auto it = st.sinks.find(id);
  if (it != st.sinks.end()) {
    st.outbox.push_back([sink = it->second, id, r] { sink->on_finish(id, r); });
    st.sinks.erase(it);
  }
  st.pool.erase(id);
}

// Ends a sequence that is not inside a job.
void end_now(PoolManagerState& st, SeqId id, FinishReason reason, const std::string& error = "") {
  Sequence& s = st.pool.at(id);
  const bool was_waiting = s.status == SeqStatus::Waiting;
  if (s.status != SeqStatus::Finished) st.pool.cancel(id);
  if (was_waiting) st.settings.queued->fetch_sub(1);
  if (st.window) st.window->remove(id);
  notify_finish(st, id, reason, error);
}

void publish(PoolManagerState& st) {
  EngineStats s;
  s.totals = st.totals;
  s.queued = st.settings.queued->load();
  s.active = st.window ? st.window->members().size() : st.busy.size();
  s.submitted = st.submitted;
  s.finished = st.finished;
  s.cancelled = st.cancelled;
  if (st.settings.policy) s.speculation = st.settings.policy->estimates();
  std::lock_guard<std::mutex> lock(st.settings.board->mu);
  st.settings.board->stats = s;
}

// The end of every event: publish the stats, then tell the sinks, then answer a shutdown.
void maybe_finish_shutdown(PoolManagerState& st) {
  publish(st);
  std::vector<std::function<void()>> out;
  out.swap(st.outbox);
  for (auto& f : out) f();
  if (st.shutting_down && st.promise_pending && st.jobs == 0 && st.pool.unfinished() == 0) {
    st.promise_pending = false;
    st.shutdown_promise.deliver(true);
  }
}

JobPtr new_job(PoolManagerState& st, StepJob::Kind kind, std::vector<SeqId> ids) {
  auto job = std::make_shared<StepJob>();
  job->kind = kind;
  job->serial = ++st.serial;
  job->ids = std::move(ids);
  for (SeqId id : job->ids) st.busy.insert(id);
  ++st.jobs;
  return job;
}

// EXSPEC_TRACE=1: every choice and every step's predicted against measured phase times.
const bool kTrace = std::getenv("EXSPEC_TRACE") != nullptr;

void trace_choice(const DraftLengthPolicy& policy, const std::vector<RowOutlook>& rows, int64_t context, bool reused,
                  int64_t lag, int64_t chosen) {
  double alpha = 0;
  for (const auto& r : rows) alpha += r.acceptance;
  std::fprintf(stderr, "choose B %zu S %lld L %lld reused %d mean_alpha %.2f global %.2f serial %.2f | expected tokens / predicted ms:",
               rows.size(), static_cast<long long>(context), static_cast<long long>(lag), static_cast<int>(reused),
               alpha / static_cast<double>(rows.size()), policy.acceptance(), policy.serial_share());
  for (int64_t k = 0; k <= policy.settings().k_max; ++k) {
    const DraftChoice c = policy.evaluate(rows, context, reused, lag, k, 0.0);
    std::fprintf(stderr, " K%lld %.1f/%.1f", static_cast<long long>(k), c.expected_tokens, 1e3 * c.predicted_s);
  }
  std::fprintf(stderr, " -> %lld\n", static_cast<long long>(chosen));
}

// Milliseconds since the engine started: where the wall time goes between steps and prefills.
double trace_ms(const PoolManagerState& st) {
  return 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - st.started).count();
}

void trace_step(const PoolManagerState& st, const StepJob& job) {
  const StepCostModel* c = st.settings.policy ? &st.settings.policy->costs() : nullptr;
  const StepShape& s = job.shape;
  auto pred = [&](double (StepCostModel::*f)(const StepShape&) const) { return c ? 1e3 * (c->*f)(s) : 0.0; };
  std::fprintf(stderr, "step t %.1f B %zu K %lld S %lld L %lld | ms predicted/measured: draft %.1f/%.1f verify %.1f/%.1f "
               "align %.1f/%.1f | grouped %d reused %d\n",
               trace_ms(st), job.ids.size(), static_cast<long long>(job.k), static_cast<long long>(s.context),
               static_cast<long long>(s.lag), pred(&StepCostModel::predict_draft), 1e3 * job.draft_s,
               pred(&StepCostModel::predict_verify), 1e3 * job.verify_s, pred(&StepCostModel::predict_align),
               1e3 * job.align_s, static_cast<int>(job.grouped), static_cast<int>(job.reused));
}

// K for a step over job.ids (adaptive: the policy's choice for these rows; else fixed), and the
// rows' sampling state.
void choose_k(PoolManagerState& st, StepJob& job, bool reused) {
  job.sampling = sampling_rows(st.pool, job.ids);
  job.k = 0;
  const auto& policy = st.settings.policy;
  if (!policy) return;
  const BatchOutlook o = policy->outlook(st.pool, job.ids);
  job.k = policy->choose(o.rows, o.context, reused, o.lag).k;
  if (kTrace) trace_choice(*policy, o.rows, o.context, reused, o.lag, job.k);
  job.shape = StepShape{static_cast<int64_t>(job.ids.size()), job.k, o.context, o.lag, reused};
}

void admit(PoolManagerState& st, SubmitMsg& m) {
  st.sinks[m.id] = m.sink;
  st.pool.admit(std::move(m.request), m.priority, m.id);
  ++st.submitted;
  ++st.totals.sequences;
  if (st.pool.at(m.id).status == SeqStatus::Finished) {  // max_tokens 0
    st.settings.queued->fetch_sub(1);
    notify_finish(st, m.id, FinishReason::Length);
  }
}

void start_prefill(Self self, std::vector<SeqId> ids) {
  auto& st = self->state;
  if (ids.empty()) return;
  JobPtr job = new_job(st, StepJob::Kind::Prefill, std::move(ids));
  for (SeqId id : job->ids) {
    const auto& p = st.pool.at(id).request.prompt;
    job->prefixes.emplace_back(p.begin(), p.end() - 1);
  }
  st.prefilling = true;
  self->send(st.route->verifier, prefill_atom::value, job);  // the draft catches up lazily (spec_batch.h)
}

// The main loop, run after every event: refill, prefill newcomers, dispatch batches.
void schedule(Self self) {
  auto& st = self->state;
  const auto& cfg = st.settings.decoding;
  while (st.jobs < max_jobs(st)) {
    if (!st.prefilling) {
      std::vector<SeqId> fresh;
      if (fixed_batches(st)) {
        // eqspec/nonspec: a new fixed batch of up to B waiting sequences.
        fresh = st.pool.take_waiting(static_cast<size_t>(cfg.batch_size), cfg.sort_by_length);
        st.settings.queued->fetch_sub(fresh.size());
      } else {
        std::vector<SeqId> joined = st.window->refill(st.pool);
        st.settings.queued->fetch_sub(joined.size());
        st.to_prefill.insert(st.to_prefill.end(), joined.begin(), joined.end());
        // A batch's worth at a time: the first batches decode while the rest of a large window
        // refill is prefilled, instead of every sequence waiting for one long prefill.
        while (!st.to_prefill.empty() && fresh.size() < static_cast<size_t>(cfg.batch_size)) {
          const SeqId id = st.to_prefill.front();
          st.to_prefill.pop_front();
          if (st.pool.contains(id) && st.pool.at(id).status == SeqStatus::Active) fresh.push_back(id);  // not cancelled
        }
      }
      if (!fresh.empty()) {
        start_prefill(self, std::move(fresh));
        continue;
      }
    }
    if (fixed_batches(st)) return;  // fixed batches are dispatched when their prefill returns
    std::vector<Candidate> ready;
    for (SeqId id : st.window->members()) {
      const Sequence& s = st.pool.at(id);
      if (!st.busy.count(id) && s.tensors) ready.push_back({id, s.length(), s.last_step});
    }
    if (ready.empty()) return;
    BatchChoice choice = st.former->form(ready, st.step, !st.settings.policy || st.settings.policy->speculating());
    JobPtr job = new_job(st, StepJob::Kind::Step, std::move(choice.ids));
    std::vector<const SeqTensors*> rows;
    for (SeqId id : job->ids) {
      job->inputs.push_back(st.pool.at(id).tensors);
      rows.push_back(job->inputs.back().get());
    }
    choose_k(st, *job, reuses_parked(rows));
    self->send(st.route->realigner, assemble_atom::value, job);
  }
}

void on_prefilled(Self self, JobPtr job) {
  auto& st = self->state;
  st.last_full = false;  // the pipeline held a prefill: the next interval is not a step's pace
  --st.jobs;
  st.prefilling = false;
  std::vector<SeqId> live;
  std::vector<std::shared_ptr<SeqTensors>> states;
  for (size_t i = 0; i < job->ids.size(); ++i) {
    const SeqId id = job->ids[i];
    st.busy.erase(id);
    auto c = st.cancel_pending.find(id);
    if (c != st.cancel_pending.end() || !job->error.empty()) {
      end_now(st, id, c != st.cancel_pending.end() ? c->second : FinishReason::None, job->error);
      if (c != st.cancel_pending.end()) st.cancel_pending.erase(c);
      continue;
    }
    Sequence& s = st.pool.at(id);
    auto t = std::make_shared<SeqTensors>(
        new_sequence(std::move(job->target_caches[i]), s.request.prompt, st.settings.decoding.mode != Mode::NonSpec));
    s.draft_lag = static_cast<int64_t>(t->draft_lag.size());
    s.tensors = t;
    live.push_back(id);
    states.push_back(t);
  }
  st.totals.prefill_s += job->prefill_s;
  if (kTrace)
    std::fprintf(stderr, "prefill t %.1f rows %zu ms %.1f\n", trace_ms(st), job->ids.size(), 1e3 * job->prefill_s);
  if (fixed_batches(st) && !live.empty()) {
    // The fixed batch lives on as one job until all its rows finish.
    JobPtr step = new_job(st, StepJob::Kind::Step, live);
    step->persistent = true;
    choose_k(st, *step, false);  // its first step stacks the prefilled caches
    step->inputs = std::move(states);
    for (SeqId id : live) st.pool.at(id).tensors.reset();
    self->send(st.route->realigner, assemble_atom::value, step);
  }
  schedule(self);
  maybe_finish_shutdown(st);
}

// Two step completions in a row with the pipeline full of steps: the time between them is what
// a step really costs when phases overlap (the policy learns the overlap from it).
void time_pipeline(PoolManagerState& st, const StepJob& job) {
  const auto now = std::chrono::steady_clock::now();
  const bool full = st.jobs == max_jobs(st) && !st.prefilling && job.error.empty();
  if (full && st.last_full && st.settings.policy)
    st.settings.policy->observe_interval(std::chrono::duration<double>(now - st.last_done).count(), job.draft_s,
                                         job.verify_s, job.align_s);
  st.last_done = now;
  st.last_full = full;
}

void on_step_done(Self self, JobPtr job) {
  auto& st = self->state;
  time_pipeline(st, *job);
  st.totals.draft_s += job->draft_s;
  st.totals.verify_s += job->verify_s;
  st.totals.align_s += job->align_s;
  if (job->error.empty()) {
    ++st.totals.steps;
    st.totals.grouped_steps += job->grouped;
    st.totals.reused_steps += job->reused;
    st.totals.row_verifications += static_cast<int64_t>(job->ids.size());
    st.totals.drafted += static_cast<int64_t>(job->ids.size()) * job->k;
    st.totals.count_k(job->k);
    if (kTrace) trace_step(st, *job);
    if (st.settings.policy) {
      st.settings.policy->observe_step(job->shape, job->draft_s, job->verify_s, job->align_s);
    }
  }
  std::vector<SeqId> still;
  std::vector<int64_t> drop;
  for (size_t b = 0; b < job->ids.size(); ++b) {
    const SeqId id = job->ids[b];
    auto c = st.cancel_pending.find(id);
    if (!job->error.empty() || c != st.cancel_pending.end()) {
      st.busy.erase(id);
      end_now(st, id, c != st.cancel_pending.end() ? c->second : FinishReason::None, job->error);
      if (c != st.cancel_pending.end()) st.cancel_pending.erase(c);
      drop.push_back(static_cast<int64_t>(b));
      continue;
    }
    st.totals.accepted += job->accepted[b];
    Sequence& s = st.pool.at(id);
    const int band = temperature_band(s.request.sampling.temperature);
    st.totals.count_band(band, job->k, job->accepted[b]);
    if (st.settings.policy) st.settings.policy->learn(s.acceptance, s.draft_lag, job->k, job->accepted[b], band);
    const size_t before = s.generated.size();
    const std::vector<TokenLogprob>* lp = b < job->logprobs.size() && !job->logprobs[b].empty() ? &job->logprobs[b] : nullptr;
    const size_t n = st.pool.write_back(id, job->committed[b].data(), job->committed[b].size(), lp ? lp->data() : nullptr);
    st.totals.committed += static_cast<int64_t>(n);
    s.last_step = st.step;
    auto sink = st.sinks.find(id);
    if (n > 0 && sink != st.sinks.end() && lp)
      st.outbox.push_back([sink = sink->second, id, lps = std::vector<TokenLogprob>(lp->begin(), lp->begin() + n)] {
        sink->on_logprobs(id, lps);
      });
    if (n > 0 && sink != st.sinks.end())
      st.outbox.push_back([sink = sink->second, id, delta = std::vector<int64_t>(s.generated.begin() + before, s.generated.end())] {
        sink->on_tokens(id, delta);
      });
    if (s.status == SeqStatus::Finished) {
      st.busy.erase(id);
      if (st.window) st.window->remove(id);
      notify_finish(st, id, s.finish);
      drop.push_back(static_cast<int64_t>(b));
    } else {
      if (!job->persistent) {
        s.tensors = job->outputs[b];
        st.busy.erase(id);
      }
      still.push_back(id);
    }
  }
  ++st.step;
  if (job->persistent && job->error.empty() && !still.empty()) {
    job->ids = std::move(still);  // the same job goes round again (EqSpec: fixed batch)
    job->drop_rows = std::move(drop);
    job->committed.clear();
    job->draft_s = job->verify_s = job->align_s = 0;
    choose_k(st, *job, true);  // a fixed batch lives on: no repad copy
    self->send(st.route->realigner, assemble_atom::value, job);
  } else {
    --st.jobs;
  }
  schedule(self);
  maybe_finish_shutdown(st);
}

void on_cancel(Self self, SeqId id, FinishReason reason) {
  auto& st = self->state;
  if (!st.pool.contains(id)) return;
  if (st.pool.at(id).status == SeqStatus::Finished) return;
  if (st.busy.count(id)) {
    st.cancel_pending.emplace(id, reason);  // at the next step boundary
    return;
  }
  end_now(st, id, reason);
  schedule(self);
  maybe_finish_shutdown(st);
}

}  // namespace

pool_manager_actor spawn_pool_manager(caf::actor_system& system, PoolManagerSettings settings,
                                      std::shared_ptr<const Route> route) {
  return system.spawn([settings, route](Self self) -> pool_manager_actor::behavior_type {
    auto& st = self->state;
    st.settings = settings;
    st.route = route;
    const auto& c = settings.decoding;
    if (kTrace)
      std::fprintf(stderr, "engine mode %d B %lld W %lld adaptive %d K %lld\n", static_cast<int>(c.mode),
                   static_cast<long long>(c.batch_size), static_cast<long long>(c.window), static_cast<int>(c.adaptive_k),
                   static_cast<long long>(c.draft_tokens));
    if (c.mode == Mode::ExSpec) {
      st.window = std::make_unique<Window>(static_cast<size_t>(c.window), c.sort_by_length);
      st.former = std::make_unique<BatchFormer>(static_cast<size_t>(c.batch_size), c.min_group_fill, c.max_wait);
    }
    return {
        [=](submit_atom, std::shared_ptr<SubmitMsg> m) {
          admit(self->state, *m);
          schedule(self);
          maybe_finish_shutdown(self->state);
        },
        [=](submit_many_atom, std::shared_ptr<std::vector<SubmitMsg>> ms) {
          for (auto& m : *ms) admit(self->state, m);
          schedule(self);
          maybe_finish_shutdown(self->state);
        },
        [=](cancel_atom, SeqId id, int reason) { on_cancel(self, id, static_cast<FinishReason>(reason)); },
        [=](prefilled_atom, JobPtr job) { on_prefilled(self, std::move(job)); },
        [=](step_done_atom, JobPtr job) { on_step_done(self, std::move(job)); },
        [=](shutdown_atom, bool drain) -> caf::result<bool> {
          auto& st = self->state;
          st.shutting_down = true;
          if (!drain) {
            std::vector<SeqId> all;
            if (st.window)
              for (SeqId id : st.window->members()) all.push_back(id);
            // Waiting sequences: everything not yet taken.
            for (SeqId id : st.pool.take_waiting(st.pool.waiting(), false)) {
              st.settings.queued->fetch_sub(1);
              all.push_back(id);
            }
            for (SeqId id : all) {
              if (!st.pool.contains(id)) continue;
              if (st.busy.count(id)) st.cancel_pending.emplace(id, FinishReason::None);
              else end_now(st, id, FinishReason::None);
            }
            // Rows inside fixed batches are busy: they end at their next step boundary.
            for (SeqId id : st.busy) st.cancel_pending.emplace(id, FinishReason::None);
          }
          st.shutdown_promise = self->make_response_promise<bool>();
          st.promise_pending = true;
          maybe_finish_shutdown(st);  // delivers at once when nothing is left
          return st.shutdown_promise;
        },
    };
  });
}

}  // namespace exspec
