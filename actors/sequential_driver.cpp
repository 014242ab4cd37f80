#include "actors/sequential_driver.h"

#include <chrono>
#include <stdexcept>
#include <unordered_map>

#include "actors/calibration.h"
#include "actors/model_pair.h"
#include "actors/scheduler.h"
#include "actors/step_phases.h"
#include "model/decoder.h"
#include "model/greedy.h"

namespace exspec {

SequentialDriver::SequentialDriver(std::shared_ptr<const Decoder> target, std::shared_ptr<const Decoder> draft,
                                   EngineConfig config)
    : target_(std::move(target)), draft_(std::move(draft)), config_(config) {
  validate(config_);
  if (config_.mode == Mode::NonSpec) draft_.reset();
  check_models(config_.mode, *target_, draft_.get());
  policy_ = make_policy(config_, *target_, draft_.get(), /*pipelined=*/false);
}

std::vector<SeqResult> SequentialDriver::run(const std::vector<SeqRequest>& requests) {
  for (const auto& r : requests) validate_request(*target_, r);
  const auto t0 = std::chrono::steady_clock::now();
  Scheduler scheduler(config_, policy_, /*max_in_flight=*/1);
  std::unordered_map<SeqId, size_t> index;
  for (size_t i = 0; i < requests.size(); ++i) index[scheduler.admit(requests[i])] = i;
  std::vector<SeqResult> out(requests.size());
  auto collect = [&] {
    for (SeqEvent& e : scheduler.take_events())
      if (e.finished) out[index.at(e.id)] = std::move(*e.finished);
  };
  collect();
  while (!scheduler.idle()) {
    Work w = scheduler.next();
    if (auto* p = std::get_if<PrefillPlan>(&w)) {
      PrefillWork prefill{std::move(*p), {}};
      prefill_phase(*target_, prefill);
      scheduler.prefilled(std::move(prefill.outcome));
    } else if (auto* s = std::get_if<StepPlan>(&w)) {
      StepWork step;
      step.plan = std::move(*s);
      assemble_phase(step);
      if (step.plan.k > 0) draft_phase(*draft_, step);
      verify_phase(*target_, step);
      split_phase(step);
      scheduler.complete(std::move(step.outcome));
    } else {
      throw std::logic_error("SequentialDriver: the scheduler has unfinished sequences but no work");
    }
    collect();
  }
  stats_ = scheduler.stats();
  stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const SeqResult& r : out)
    if (!r.error.empty()) throw std::runtime_error(r.error);
  return out;
}

}  // namespace exspec
