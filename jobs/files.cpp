#include "jobs/files.h"

#include <iostream>

#include "http/api_error.h"
#include "jobs/multipart.h"
#include "http/safe_text.h"

namespace exspec::http {
namespace bhttp = boost::beast::http;
using nlohmann::ordered_json;

jobs::JobStore& need_jobs(ServerContext& ctx) {
  if (!ctx.jobs)
    throw ApiError(404,
                   "the Files and Batches APIs need a data directory: start the server with --data-dir DIR "
                   "(or set \"data_dir\" in the config file), or a shared store with --job-store postgresql://...",
                   "", "not_found");
  return *ctx.jobs;
}

ordered_json file_json(const jobs::FileRec& f) {
  return ordered_json{{"id", f.id},           {"object", "file"},       {"bytes", f.bytes},
                      {"created_at", f.created_at}, {"filename", f.filename}, {"purpose", f.purpose},
                      {"status", "processed"}, {"expires_at", nullptr}, {"status_details", nullptr}};
}

namespace {

// File names are the client's bytes: dumped with invalid UTF-8 replaced, so that one odd name
// cannot make every listing fail.
std::string dump(const ordered_json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

jobs::FileRec need_file(jobs::JobStore& js, const std::string& id) {
  auto f = js.file(id);
  if (!f) throw ApiError(404, "No such File object: " + id, "id", "not_found");
  return *f;
}

}  // namespace

Response upload_file(const Call& c) {
  jobs::JobStore& js = need_jobs(c.ctx);
  const Request& req = c.req;
  const auto boundary = multipart_boundary(std::string(req[bhttp::field::content_type]));
  if (!boundary)
    throw ApiError(400, "POST /v1/files takes multipart/form-data with the fields 'file' and 'purpose'", "",
                   "invalid_request");
  std::vector<FormPart> parts;
  try {
    parts = parse_multipart(req.body(), *boundary);
  } catch (const std::invalid_argument& e) {
    throw ApiError(400, std::string("malformed multipart body: ") + e.what(), "", "invalid_request");
  }
  const FormPart* file = nullptr;
  std::string purpose;
  bool has_purpose = false;
  for (const auto& p : parts) {
    if (p.name == "file") file = &p;
    if (p.name == "purpose") {
      purpose = std::string(p.data);
      has_purpose = true;
    }
  }
  if (!has_purpose) throw ApiError(400, "missing required parameter: 'purpose'", "purpose", "missing_required_parameter");
  if (purpose != "batch")
    throw ApiError(400, "purpose '" + purpose + "' is not supported: exspec stores files for the Batch API only "
                        "(purpose=batch)", "purpose", "unsupported_value");
  if (!file) throw ApiError(400, "missing required parameter: 'file'", "file", "missing_required_parameter");
  if (file->data.size() > c.ctx.cfg.limits.max_file_bytes)
    throw ApiError(413, "the file is " + std::to_string(file->data.size()) + " bytes; the limit is " +
                            std::to_string(c.ctx.cfg.limits.max_file_bytes) + " (limits.max_file_bytes)",
                   "file", "file_too_large");
  const std::string name = file->filename.empty() ? "upload.jsonl" : file->filename;
  jobs::FileRec f = js.add_file(purpose, name, std::string(file->data));
  return c.json(200, dump(file_json(f)));
}

Response list_files(const Call& c) {
  ordered_json data = ordered_json::array();
  for (const auto& f : need_jobs(c.ctx).files()) data.push_back(file_json(f));
  ordered_json out{{"object", "list"}, {"data", data}, {"has_more", false}};
  out["first_id"] = data.empty() ? ordered_json(nullptr) : data.front()["id"];
  out["last_id"] = data.empty() ? ordered_json(nullptr) : data.back()["id"];
  return c.json(200, dump(out));
}

Response get_file(const Call& c) { return c.json(200, dump(file_json(need_file(need_jobs(c.ctx), c.params.at(0))))); }

Response file_content(const Call& c) {
  jobs::JobStore& js = need_jobs(c.ctx);
  const jobs::FileRec f = need_file(js, c.params.at(0));
  std::string body;
  try {
    body = js.read_content(f);
  } catch (const jobs::ContentMissing& e) {
    // The server lost what it had accepted: a server error (500), not the client's. The id is
    // all a client learns; the path goes to the log.
    std::cerr << "exspec serve: " << e.what() << " (looked for " << e.where() << ")" << std::endl;
    throw ApiError(500, std::string(e.what()) + "; an operator must restore it (the server log says where)", "",
                   "file_content_missing");
  }
  Response res = c.json(200, std::move(body));
  res.set(bhttp::field::content_type, "application/octet-stream");
  res.set(bhttp::field::content_disposition, content_disposition(f.filename));
  return res;
}

Response delete_file(const Call& c) {
  jobs::JobStore& js = need_jobs(c.ctx);
  const std::string& id = c.params.at(0);
  need_file(js, id);
  js.delete_file(id);
  return c.json(200, dump(ordered_json{{"id", id}, {"object", "file"}, {"deleted", true}}));
}

}  // namespace exspec::http
