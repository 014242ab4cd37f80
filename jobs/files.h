// The OpenAI Files API over the job store, without HTTP: POST /v1/files (multipart, purpose=batch),
// GET /v1/files, GET /v1/files/{id}, GET /v1/files/{id}/content, DELETE /v1/files/{id}; http/'s
// route table (http/jobs_api.h) calls one function per route. They throw RequestError.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "jobs/job_store.h"

namespace exspec::jobs {

nlohmann::ordered_json file_json(const FileRec& f);
FileRec need_file(JobStore& js, const std::string& id);  // a 404 when there is none

// The uploaded file, stored; content_type is the request's Content-Type (multipart/form-data).
nlohmann::ordered_json upload_file(JobStore& js, const std::string& content_type, std::string_view body,
                                   uint64_t max_file_bytes);
nlohmann::ordered_json list_files(JobStore& js);
// The file's bytes; a 500 when they are gone from the store (the log says where they were).
std::string file_content(JobStore& js, const FileRec& f);
nlohmann::ordered_json delete_file(JobStore& js, const std::string& id);

}  // namespace exspec::jobs
