// The proposers without a model (actors/scheduler/proposer.h) and the draft-lag rule they meet
// (model/slot_row.h): plain C++, no tensors.
#include <catch2/catch.hpp>

#include "actors/scheduler/draft_length.h"
#include "actors/scheduler/proposer.h"
#include "model/slot_row.h"

using namespace exspec;
using V = std::vector<int64_t>;

CATCH_TEST_CASE("prompt lookup proposes what followed the latest earlier match, longest n first", "[proposer]") {
  // ... 7 8 9 | 1 2 ... 7 8 9 -> after the earlier "7 8 9" came 1 2.
  CATCH_CHECK(propose_lookup({7, 8, 9, 1, 2, 3, 4, 7, 8, 9}, 3) == V{1, 2, 3});
  CATCH_CHECK(propose_lookup({7, 8, 9, 1, 2, 3, 4, 7, 8, 9}, 1) == V{1});
  // The most recent occurrence of the suffix wins among equals.
  CATCH_CHECK(propose_lookup({5, 1, 5, 2, 5}, 2, LookupSettings{1, 4}) == V{2, 5});
  CATCH_CHECK(propose_lookup({5, 1, 7, 5, 1, 9, 5, 1}, 1) == V{9});
  // By default a single recurring token proposes nothing (bigrams and longer only).
  CATCH_CHECK(propose_lookup({5, 1, 5, 2, 5}, 2).empty());
  // A longer match beats a more recent shorter one: "4 5" occurred at the start, "5" just before.
  CATCH_CHECK(propose_lookup({4, 5, 6, 6, 9, 5, 7, 4, 5}, 2, LookupSettings{1, 4}) == V{6, 6});
  // What follows may run into the suffix itself (a loop repeats).
  CATCH_CHECK(propose_lookup({3, 3, 3}, 4) == V{3});
  CATCH_CHECK(propose_lookup({1, 2, 1, 2, 1, 2}, 4) == V{1, 2});
  // Nothing to match, nothing asked, too short: no proposal.
  CATCH_CHECK(propose_lookup({1, 2, 3, 4}, 3).empty());
  CATCH_CHECK(propose_lookup({1, 2, 1, 2}, 0).empty());
  CATCH_CHECK(propose_lookup({1}, 3).empty());
  CATCH_CHECK(propose_lookup({}, 3).empty());
  // n bounded below: a single-token match is not enough when min_n is 2.
  CATCH_CHECK(propose_lookup({5, 1, 2, 5}, 2, LookupSettings{2, 3}).empty());
  CATCH_CHECK(propose_lookup({5, 1, 2, 5}, 2, LookupSettings{1, 3}) == V{1, 2});
}

CATCH_TEST_CASE("a prediction is proposed from its start, then re-aligned after a rejection", "[proposer]") {
  const V pred{10, 11, 12, 13, 14, 15, 16};
  CATCH_CHECK(propose_prediction(pred, {}, 3) == V{10, 11, 12});
  CATCH_CHECK(propose_prediction(pred, {10, 11}, 3) == V{12, 13, 14});  // on track
  CATCH_CHECK(propose_prediction(pred, {10, 11, 12, 13, 14, 15, 16}, 3).empty());  // all used
  // The target wrote 99 where the prediction had 12: nothing of the prediction follows 99 ...
  CATCH_CHECK(propose_prediction(pred, {10, 11, 99}, 3).empty());
  // ... until the text is back on it: after "99 13" the prediction goes on at 14.
  CATCH_CHECK(propose_prediction(pred, {10, 11, 99, 13}, 2) == V{14, 15});
  // An inserted token shifts the text by one: the match nearest to where it would be is taken.
  const V rep{1, 2, 1, 2, 1, 2, 3};
  CATCH_CHECK(propose_prediction(rep, {1, 2, 1, 2}, 2) == V{1, 2});
  CATCH_CHECK(propose_prediction(rep, {1, 2, 1, 2, 1, 2}, 2) == V{3});
  CATCH_CHECK(propose_prediction({}, {1}, 3).empty());
  CATCH_CHECK(propose_prediction(pred, {10}, 0).empty());
}

CATCH_TEST_CASE("the draft's lag after a step keeps only the drafts the draft model fed", "[proposer][inplace]") {
  // K = 0: the draft was fed nothing, pending joins its lag.
  CATCH_CHECK(lag_after_step(2, 0, 0, 0) == 3);
  // Its own drafts: all accepted leaves d_K unfed; fewer, nothing lags.
  CATCH_CHECK(lag_after_step(0, 3, 3, 3) == 1);
  CATCH_CHECK(lag_after_step(5, 3, 1, 3) == 0);
  // A proposal in place of its drafts, of which it fed the first `agree`: the accepted tokens past
  // those are not in its store.
  CATCH_CHECK(lag_after_step(0, 4, 4, 0) == 4);
  CATCH_CHECK(lag_after_step(0, 4, 3, 1) == 2);
  CATCH_CHECK(lag_after_step(0, 4, 1, 2) == 0);
  CATCH_CHECK(lag_after_step(0, 4, 4, 4) == 1);
}

CATCH_TEST_CASE("adaptive K prices predictions by what predictions got, and proposals by their length", "[proposer][policy]") {
  DraftLengthPolicy p(DraftLengthSettings{});
  AcceptanceEstimate lookup_row, predicted_row, fresh;
  for (int i = 0; i < 40; ++i) {
    p.learn(lookup_row, 4, 0, 0);                      // the server's lookups: always wrong
    p.learn(predicted_row, 4, 4, 0, /*prediction=*/true);  // a client's prediction: always right
  }
  CATCH_CHECK(p.acceptance() < 0.1);  // the engine-wide estimate is the lookups'
  // A fresh request's prediction starts from what predictions got, not from the lookups' rate.
  CATCH_CHECK(p.outlook(fresh, 32, 0, true).acceptance > 0.8);
  CATCH_CHECK(p.outlook(fresh, 32, 0, false).acceptance < 0.2);
  // A proposal of 2 tokens earns nothing from K beyond 2.
  const std::vector<RowOutlook> rows{RowOutlook{0.9, 32, 2}};
  CATCH_CHECK(p.evaluate(rows, 16, true, 0, 5, 0).expected_tokens == p.evaluate(rows, 16, true, 0, 2, 0).expected_tokens);
  CATCH_CHECK(p.evaluate(rows, 16, true, 0, 2, 0).expected_tokens > p.evaluate(rows, 16, true, 0, 1, 0).expected_tokens);
}
