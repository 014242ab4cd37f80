#include "actors/sequential_driver.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <unordered_map>

#include "actors/jobs/calibration.h"
#include "actors/planners.h"
#include "actors/jobs/job.h"
#include "actors/jobs/model_pair.h"
#include "model/decoder.h"
#include "model/kv_store.h"

namespace exspec {

SequentialDriver::SequentialDriver(std::shared_ptr<const Decoder> target, std::shared_ptr<const Decoder> draft,
                                   EngineConfig config)
    : target_(std::move(target)), draft_(std::move(draft)), config_(config) {
  if (config_.mode == Mode::NonSpec) draft_.reset();
  config_.draft = draft_ != nullptr;  // without one, in place runs plain steps
  validate(config_);
  check_models(config_, *target_, draft_.get());
  fit_store(config_, *target_, draft_.get());
  policy_ = make_policy(config_, *target_, draft_.get(), /*pipelined=*/false, mode_timings(config_));
}

namespace {

void count(const Job& j, DriverTrace& t, int64_t& steps_since_prefill) {
  if (j.prefills()) {
    if (t.prefills++ > 0) t.steps_between_prefills += steps_since_prefill;
    steps_since_prefill = 0;
  } else {
    ++t.steps, ++steps_since_prefill;
  }
}

}  // namespace

std::vector<SeqResult> SequentialDriver::run(const std::vector<SeqRequest>& requests, const Timeline& timeline) {
  for (const auto& r : requests) {
    validate_request(target_->config(), r);
    const std::string misfit = slot_misfit(config_, r);
    if (!misfit.empty()) throw std::invalid_argument(misfit);
  }
  // In place: each model's store, for this run (null in the paper's modes).
  std::shared_ptr<KVStore> tstore = make_store(config_, target_.get());
  std::shared_ptr<KVStore> dstore = make_store(config_, draft_.get());
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<JobPlanner> jobs = make_planner(config_, policy_, /*max_in_flight=*/1);
  Planner& planner = jobs->planner();
  const Models models{target_.get(), tstore.get(), draft_.get(), dstore.get()};
  trace_ = DriverTrace{};
  std::vector<SeqResult> out(requests.size());
  std::vector<SeqId> ids(requests.size(), 0);  // 0: not arrived yet
  std::unordered_map<SeqId, size_t> index;
  size_t arrived = 0;
  int64_t steps_since_prefill = 0;
  for (int64_t now = 0;; ++now) {
    for (size_t i = 0; i < requests.size(); ++i) {
      const int64_t at = i < timeline.arrive_at.size() ? timeline.arrive_at[i] : 0;
      if (ids[i] != 0 || at > now) continue;
      ids[i] = planner.admit(requests[i]);
      index[ids[i]] = i, ++arrived;
    }
    for (auto [i, at] : timeline.cancel_at)
      if (at == now && ids.at(i) != 0) planner.cancel(ids[i], FinishReason::None);
    for (SeqEvent& e : planner.take_events())
      if (e.finished) out[index.at(e.id)] = std::move(*e.finished);
    if (arrived == requests.size() && planner.idle()) break;
    std::shared_ptr<Job> job = jobs->next();
    trace_.max_active = std::max(trace_.max_active, planner.active());
    trace_.max_waiting = std::max(trace_.max_waiting, planner.waiting());
    // Nothing is in flight here: a planner that has unfinished sequences and hands out no work
    // would leave the actor pipeline waiting for an event that never comes.
    if (!job) {
      if (!planner.idle()) throw std::logic_error("SequentialDriver: the planner has unfinished sequences but no work");
      continue;
    }
    count(*job, trace_, steps_since_prefill);
    // Before the forward here, in one thread (the server's pool-manager does it on its own
    // thread while the forward runs): the same plans either way.
    planner.plan_ahead();
    run_job(*job, models);
    jobs->done(std::move(job));
  }
  stats_ = planner.stats();
  stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const SeqResult& r : out)
    if (!r.error.empty()) throw std::runtime_error(r.error);
  return out;
}

}  // namespace exspec
