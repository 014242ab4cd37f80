// The OpenAI Batches API over the job store: POST /v1/batches, GET /v1/batches (limit/after),
// GET /v1/batches/{id}, POST /v1/batches/{id}/cancel. The work itself is the BatchRunner's.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "http/job_store.h"
#include "http/routes.h"

namespace exspec::http {

// `target` is the whole request target (the list reads its query). Throws ApiError.
Response batches_api(ServerContext& ctx, const Request& req, const std::string& path, const std::string& target,
                     bool keep_alive);

nlohmann::ordered_json batch_json(const BatchRec& b);

}  // namespace exspec::http
