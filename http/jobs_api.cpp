#include "http/jobs_api.h"

#include "http/json_body.h"
#include "http/safe_text.h"
#include "jobs/batch_runner.h"
#include "jobs/batches.h"
#include "jobs/files.h"
#include "jobs/request_error.h"

namespace exspec::http {
namespace bhttp = boost::beast::http;
using nlohmann::ordered_json;

namespace {

// The job store, or a 404 that says how to turn the Files and Batches APIs on.
jobs::JobStore& need_jobs(ServerContext& ctx) {
  if (!ctx.jobs)
    throw ApiError(404,
                   "the Files and Batches APIs need a data directory: start the server with --data-dir DIR "
                   "(or set \"data_dir\" in the config file), or a shared store with --job-store postgresql://...",
                   "", "not_found");
  return *ctx.jobs;
}

// File names and metadata are the client's bytes: dumped with invalid UTF-8 replaced, so that
// one odd name cannot make every listing fail.
std::string dump(const ordered_json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// Runs f(store), answering its RequestError as the ApiError it describes.
template <class F>
Response with_jobs(const Call& c, F f) {
  jobs::JobStore& js = need_jobs(c.ctx);
  try {
    return f(js);
  } catch (const jobs::RequestError& e) {
    throw ApiError(e.status, e.what(), e.param, e.code);
  }
}

void wake_runner(const Call& c) {
  if (c.ctx.batches) c.ctx.batches->wake();
}

}  // namespace

Response upload_file(const Call& c) {
  return with_jobs(c, [&](jobs::JobStore& js) {
    const std::string type(c.req[bhttp::field::content_type]);
    return c.json(200, dump(jobs::upload_file(js, type, c.req.body(), c.ctx.cfg.limits.max_file_bytes)));
  });
}

Response list_files(const Call& c) {
  return with_jobs(c, [&](jobs::JobStore& js) { return c.json(200, dump(jobs::list_files(js))); });
}

Response get_file(const Call& c) {
  return with_jobs(c, [&](jobs::JobStore& js) { return c.json(200, dump(jobs::file_json(jobs::need_file(js, c.params.at(0))))); });
}

Response file_content(const Call& c) {
  return with_jobs(c, [&](jobs::JobStore& js) {
    const jobs::FileRec f = jobs::need_file(js, c.params.at(0));
    Response res = c.json(200, jobs::file_content(js, f));
    res.set(bhttp::field::content_type, "application/octet-stream");
    res.set(bhttp::field::content_disposition, content_disposition(f.filename));
    return res;
  });
}

Response delete_file(const Call& c) {
  return with_jobs(c, [&](jobs::JobStore& js) { return c.json(200, dump(jobs::delete_file(js, c.params.at(0)))); });
}

Response create_batch(const Call& c) {
  return with_jobs(c, [&](jobs::JobStore& js) {
    const ordered_json body = parse_json_body(c.req.body());
    const auto& l = c.ctx.cfg.limits;
    const std::string created = dump(jobs::create_batch(js, body, l.max_active_batches, l.batch_window_s));
    wake_runner(c);
    return c.json(200, created);
  });
}

Response list_batches(const Call& c) {
  return with_jobs(c, [&](jobs::JobStore& js) {
    return c.json(200, dump(jobs::list_batches(js, c.target.param("limit"), c.target.param("after"))));
  });
}

Response get_batch(const Call& c) {
  return with_jobs(c, [&](jobs::JobStore& js) { return c.json(200, dump(jobs::batch_json(jobs::need_batch(js, c.params.at(0))))); });
}

Response cancel_batch(const Call& c) {
  return with_jobs(c, [&](jobs::JobStore& js) {
    if (jobs::cancel_batch(js, c.params.at(0))) wake_runner(c);
    return c.json(200, dump(jobs::batch_json(jobs::need_batch(js, c.params.at(0)))));
  });
}

}  // namespace exspec::http
