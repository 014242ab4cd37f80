// What the scheduler tests (in place and the paper's modes) share: the next plan of a given kind.
#pragma once
#include <catch2/catch.hpp>

#include <cstdint>
#include <variant>
#include <vector>

namespace exspec::test {

// The scheduler's next piece of work, which must be a Plan.
template <class Plan, class Scheduler>
Plan take_plan(Scheduler& s) {
  auto w = s.plan();
  CATCH_REQUIRE(std::holds_alternative<Plan>(w));
  return std::get<Plan>(w);
}

// A step's outcome where row b accepted `accepted[b]` drafts: the committed tokens are 100 + b,
// repeated (what each store holds after it is the mode's: draft_lag_after below).
template <class Outcome, class Plan>
Outcome accept_rows(const Plan& p, const std::vector<int64_t>& accepted) {
  Outcome o;
  o.serial = p.serial;
  for (size_t b = 0; b < p.ids.size(); ++b) {
    o.accepted.push_back(accepted[b]);
    o.committed.push_back(std::vector<int64_t>(accepted[b] + 1, 100 + static_cast<int64_t>(b)));
  }
  return o;
}

// The draft's lag after a step where a row accepted `a` of k drafts: one token (d_k, never fed)
// where every draft was accepted.
inline int64_t draft_lag_after(int64_t a, int64_t k) { return a == k ? 1 : 0; }

}  // namespace exspec::test
