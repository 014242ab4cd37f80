// What the fairness tests share (tests/http/test_grammar_budget.cpp, test_request_fairness.cpp):
// a structured-output completion request, and the pace of 8 streaming clients.
#pragma once
#include <atomic>

#include "tests/http/support.h"

namespace exspec::httptest {

// A completion of `max_tokens` tokens constrained by a JSON schema.
json constrained(const json& schema, bool stream = false, int max_tokens = 8);

// 8 clients streaming ordinary completions of 32 tokens for `seconds`: their tokens per second
// (from each stream's usage). Any answer but a whole 200 stream sets `failed`.
double streaming_rate(int port, double seconds, std::atomic<bool>& failed);

// The least attacked/alone ratio a fairness test requires: EXSPEC_FAIRNESS_BOUND (e.g. 0.7, the
// issues' bound), or 0 when unset. A ratio is a speed: on a shared VM it moves with the other
// tenants even with no other test running (docs/testing.md), so CI prints it and a quiet machine
// can hold it to the bound.
double fairness_bound();

}  // namespace exspec::httptest
