// The OpenAI Files API over the job store: POST /v1/files (multipart, purpose=batch),
// GET /v1/files, GET /v1/files/{id}, GET /v1/files/{id}/content, DELETE /v1/files/{id}.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "http/job_store.h"
#include "http/routes.h"

namespace exspec::http {

// `path` is the target without its query. Throws ApiError.
Response files_api(ServerContext& ctx, const Request& req, const std::string& path, bool keep_alive);

nlohmann::ordered_json file_json(const FileRec& f);

// The job store, or a 404 that says how to turn the Files and Batches APIs on.
JobStore& need_jobs(ServerContext& ctx);
// A 405 unless the method is `m`.
void need_verb(const Request& req, boost::beast::http::verb m);

}  // namespace exspec::http
