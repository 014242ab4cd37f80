// The OpenAI Batches API over the job store, without HTTP: POST /v1/batches, GET /v1/batches
// (limit/after), GET /v1/batches/{id}, POST /v1/batches/{id}/cancel; http/'s route table
// (http/jobs_api.h) calls them and wakes the BatchRunner, which does the work. They throw
// RequestError.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "jobs/job_store.h"

namespace exspec::jobs {

nlohmann::ordered_json batch_json(const BatchRec& b);
BatchRec need_batch(JobStore& js, const std::string& id);  // a 404 when there is none

// The batch created from the request body (status validating). max_active: limits.max_active_batches;
// window_s: limits.batch_window_s, its "24h".
nlohmann::ordered_json create_batch(JobStore& js, const nlohmann::ordered_json& body, size_t max_active,
                                    int64_t window_s);
// limit: the query's text (empty: 20); after: the id that ends the previous page.
nlohmann::ordered_json list_batches(JobStore& js, const std::string& limit, const std::string& after);
// true: the batch is cancelling now (the runner has work); a 409 when it has ended otherwise.
bool cancel_batch(JobStore& js, const std::string& id);

}  // namespace exspec::jobs
