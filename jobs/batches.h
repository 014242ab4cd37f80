// The OpenAI Batches API over the job store: POST /v1/batches, GET /v1/batches (limit/after),
// GET /v1/batches/{id}, POST /v1/batches/{id}/cancel; the route table (http/routes.cpp) calls
// one function per route. They throw ApiError. The work itself is the BatchRunner's.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "jobs/job_store.h"
#include "http/call.h"

namespace exspec::http {

Response create_batch(const Call& c);
Response list_batches(const Call& c);  // the query's limit and after
Response get_batch(const Call& c);     // c.params: {id}
Response cancel_batch(const Call& c);

nlohmann::ordered_json batch_json(const jobs::BatchRec& b);

}  // namespace exspec::http
