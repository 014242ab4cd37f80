// The OpenAI Files API over the job store: POST /v1/files (multipart, purpose=batch),
// GET /v1/files, GET /v1/files/{id}, GET /v1/files/{id}/content, DELETE /v1/files/{id}.
// The route table (http/routes.cpp) calls one function per route. They throw ApiError.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "jobs/job_store.h"
#include "http/call.h"

namespace exspec::http {

Response upload_file(const Call& c);
Response list_files(const Call& c);
Response get_file(const Call& c);  // c.params: {id}
Response file_content(const Call& c);
Response delete_file(const Call& c);

nlohmann::ordered_json file_json(const jobs::FileRec& f);

// The job store, or a 404 that says how to turn the Files and Batches APIs on.
jobs::JobStore& need_jobs(ServerContext& ctx);

}  // namespace exspec::http
