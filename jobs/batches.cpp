#include "jobs/batches.h"

#include "http/api_error.h"
#include "http/json_body.h"
#include "jobs/batch_runner.h"
#include "jobs/files.h"
#include "jobs/random_id.h"

namespace exspec::http {
using nlohmann::ordered_json;

namespace {

ordered_json stamp(int64_t t) { return t ? ordered_json(t) : ordered_json(nullptr); }

jobs::BatchRec need_batch(jobs::JobStore& js, const std::string& id) {
  auto b = js.batch(id);
  if (!b) throw ApiError(404, "No such Batch object: " + id, "id", "not_found");
  return *b;
}

}  // namespace

Response create_batch(const Call& c) {
  ServerContext& ctx = c.ctx;
  jobs::JobStore& js = need_jobs(ctx);
  const ordered_json body = parse_json_body(c.req.body());
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object", "", "invalid_type");
  for (auto it = body.begin(); it != body.end(); ++it) {
    const std::string& k = it.key();
    if (k != "input_file_id" && k != "endpoint" && k != "completion_window" && k != "metadata")
      throw bad_param(k, "Unrecognized request argument supplied: " + k, "unknown_parameter");
  }
  for (const char* k : {"input_file_id", "endpoint", "completion_window"}) {
    if (!body.contains(k)) throw bad_param(k, std::string("missing required parameter: '") + k + "'",
                                           "missing_required_parameter");
    if (!body[k].is_string()) throw bad_param(k, std::string("'") + k + "' must be a string", "invalid_type");
  }
  jobs::BatchRec b;
  b.input_file_id = body["input_file_id"];
  b.endpoint = body["endpoint"];
  b.completion_window = body["completion_window"];
  if (b.endpoint != "/v1/completions" && b.endpoint != "/v1/chat/completions")
    throw bad_param("endpoint", "endpoint '" + b.endpoint + "' is not supported; use /v1/completions or "
                                "/v1/chat/completions", "unsupported_value");
  if (b.completion_window != "24h")
    throw bad_param("completion_window", "completion_window must be '24h'", "invalid_value");
  if (body.contains("metadata") && !body["metadata"].is_null()) {
    const ordered_json& m = body["metadata"];
    if (!m.is_object() || m.size() > 16)
      throw bad_param("metadata", "metadata must be an object of at most 16 string values", "invalid_type");
    for (auto it = m.begin(); it != m.end(); ++it)
      if (!it->is_string() || it.key().size() > 64 || it->get<std::string>().size() > 512)
        throw bad_param("metadata", "metadata values must be strings (keys up to 64, values up to 512 characters)",
                        "invalid_type");
    b.metadata = m.dump();
  }
  auto f = js.file(b.input_file_id);
  if (!f) throw bad_param("input_file_id", "No such File object: " + b.input_file_id, "invalid_value");
  if (f->purpose != "batch")
    throw bad_param("input_file_id", "the file's purpose is '" + f->purpose + "', not 'batch'", "invalid_value");
  if (js.active_batch_count() >= static_cast<int64_t>(ctx.cfg.limits.max_active_batches))
    throw ApiError(429, "there are already " + std::to_string(ctx.cfg.limits.max_active_batches) +
                            " batches running (limits.max_active_batches); retry when one has finished",
                   "", "batch_limit_reached");
  b.id = jobs::random_id("batch_");
  b.status = "validating";
  b.created_at = jobs::JobStore::now();
  b.expires_at = b.created_at + ctx.cfg.limits.batch_window_s;  // "24h" (limits.batch_window_s)
  js.add_batch(b);
  // Answer with the batch as created (status validating), read before the runner may move it on.
  const std::string created = batch_json(need_batch(js, b.id)).dump();
  if (ctx.batches) ctx.batches->wake();
  return c.json(200, created);
}

ordered_json batch_json(const jobs::BatchRec& b) {
  ordered_json errors = b.errors == "null" ? ordered_json(nullptr) : ordered_json::parse(b.errors);
  ordered_json metadata = b.metadata == "null" ? ordered_json(nullptr) : ordered_json::parse(b.metadata);
  return ordered_json{
      {"id", b.id},
      {"object", "batch"},
      {"endpoint", b.endpoint},
      {"errors", errors},
      {"input_file_id", b.input_file_id},
      {"completion_window", b.completion_window},
      {"status", b.status},
      {"output_file_id", b.output_file_id.empty() ? ordered_json(nullptr) : ordered_json(b.output_file_id)},
      {"error_file_id", b.error_file_id.empty() ? ordered_json(nullptr) : ordered_json(b.error_file_id)},
      {"created_at", b.created_at},
      {"in_progress_at", stamp(b.in_progress_at)},
      {"expires_at", stamp(b.expires_at)},
      {"finalizing_at", stamp(b.finalizing_at)},
      {"completed_at", stamp(b.completed_at)},
      {"failed_at", stamp(b.failed_at)},
      {"expired_at", stamp(b.expired_at)},
      {"cancelling_at", stamp(b.cancelling_at)},
      {"cancelled_at", stamp(b.cancelled_at)},
      {"request_counts", {{"total", b.total}, {"completed", b.completed}, {"failed", b.failed}}},
      {"metadata", metadata}};
}

Response list_batches(const Call& c) {
  int64_t limit = 20;
  if (const std::string l = c.target.param("limit"); !l.empty()) {
    try {
      limit = std::stoll(l);
    } catch (const std::exception&) {
      limit = -1;
    }
    if (limit < 1 || limit > 100) throw bad_param("limit", "limit must be an integer in 1..100");
  }
  bool more = false;
  ordered_json data = ordered_json::array();
  for (const auto& b : need_jobs(c.ctx).batches(limit, c.target.param("after"), &more)) data.push_back(batch_json(b));
  ordered_json out{{"object", "list"}, {"data", data}};
  out["first_id"] = data.empty() ? ordered_json(nullptr) : data.front()["id"];
  out["last_id"] = data.empty() ? ordered_json(nullptr) : data.back()["id"];
  out["has_more"] = more;
  return c.json(200, out.dump());
}

Response get_batch(const Call& c) { return c.json(200, batch_json(need_batch(need_jobs(c.ctx), c.params.at(0))).dump()); }

Response cancel_batch(const Call& c) {
  jobs::JobStore& js = need_jobs(c.ctx);
  const std::string& id = c.params.at(0);
  const jobs::BatchRec b = need_batch(js, id);
  if (js.transition(id, {"validating", "in_progress"}, "cancelling")) {
    if (c.ctx.batches) c.ctx.batches->wake();
  } else if (b.status != "cancelling" && b.status != "cancelled") {
    throw ApiError(409, "Cannot cancel a batch with status '" + b.status + "'.", "", "batch_not_cancellable");
  }
  return c.json(200, batch_json(need_batch(js, id)).dump());
}

}  // namespace exspec::http
