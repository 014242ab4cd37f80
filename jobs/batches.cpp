#include "jobs/batches.h"

#include "jobs/random_id.h"
#include "jobs/request_error.h"

namespace exspec::jobs {
using nlohmann::ordered_json;

namespace {

ordered_json stamp(int64_t t) { return t ? ordered_json(t) : ordered_json(nullptr); }

}  // namespace

BatchRec need_batch(JobStore& js, const std::string& id) {
  auto b = js.batch(id);
  if (!b) throw RequestError(404, "No such Batch object: " + id, "id", "not_found");
  return *b;
}

ordered_json create_batch(JobStore& js, const ordered_json& body, size_t max_active, int64_t window_s) {
  if (!body.is_object()) throw RequestError(400, "the request body must be a JSON object", "", "invalid_type");
  for (auto it = body.begin(); it != body.end(); ++it) {
    const std::string& k = it.key();
    if (k != "input_file_id" && k != "endpoint" && k != "completion_window" && k != "metadata")
      throw bad_field(k, "Unrecognized request argument supplied: " + k, "unknown_parameter");
  }
  for (const char* k : {"input_file_id", "endpoint", "completion_window"}) {
    if (!body.contains(k)) throw bad_field(k, std::string("missing required parameter: '") + k + "'",
                                           "missing_required_parameter");
    if (!body[k].is_string()) throw bad_field(k, std::string("'") + k + "' must be a string", "invalid_type");
  }
  BatchRec b;
  b.input_file_id = body["input_file_id"];
  b.endpoint = body["endpoint"];
  b.completion_window = body["completion_window"];
  if (b.endpoint != "/v1/completions" && b.endpoint != "/v1/chat/completions")
    throw bad_field("endpoint", "endpoint '" + b.endpoint + "' is not supported; use /v1/completions or "
                                "/v1/chat/completions", "unsupported_value");
  if (b.completion_window != "24h")
    throw bad_field("completion_window", "completion_window must be '24h'", "invalid_value");
  if (body.contains("metadata") && !body["metadata"].is_null()) {
    const ordered_json& m = body["metadata"];
    if (!m.is_object() || m.size() > 16)
      throw bad_field("metadata", "metadata must be an object of at most 16 string values", "invalid_type");
    for (auto it = m.begin(); it != m.end(); ++it)
      if (!it->is_string() || it.key().size() > 64 || it->get<std::string>().size() > 512)
        throw bad_field("metadata", "metadata values must be strings (keys up to 64, values up to 512 characters)",
                        "invalid_type");
    b.metadata = m.dump();
  }
  auto f = js.file(b.input_file_id);
  if (!f) throw bad_field("input_file_id", "No such File object: " + b.input_file_id, "invalid_value");
  if (f->purpose != "batch")
    throw bad_field("input_file_id", "the file's purpose is '" + f->purpose + "', not 'batch'", "invalid_value");
  if (js.active_batch_count() >= static_cast<int64_t>(max_active))
    throw RequestError(429, "there are already " + std::to_string(max_active) +
                                " batches running (limits.max_active_batches); retry when one has finished",
                       "", "batch_limit_reached");
  b.id = random_id("batch_");
  b.status = "validating";
  b.created_at = JobStore::now();
  b.expires_at = b.created_at + window_s;  // "24h" (limits.batch_window_s)
  js.add_batch(b);
  // Answer with the batch as created (status validating), read before the runner may move it on.
  return batch_json(need_batch(js, b.id));
}

ordered_json batch_json(const BatchRec& b) {
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

ordered_json list_batches(JobStore& js, const std::string& limit_text, const std::string& after) {
  int64_t limit = 20;
  if (!limit_text.empty()) {
    try {
      limit = std::stoll(limit_text);
    } catch (const std::exception&) {
      limit = -1;
    }
    if (limit < 1 || limit > 100) throw bad_field("limit", "limit must be an integer in 1..100");
  }
  bool more = false;
  ordered_json data = ordered_json::array();
  for (const auto& b : js.batches(limit, after, &more)) data.push_back(batch_json(b));
  ordered_json out{{"object", "list"}, {"data", data}};
  out["first_id"] = data.empty() ? ordered_json(nullptr) : data.front()["id"];
  out["last_id"] = data.empty() ? ordered_json(nullptr) : data.back()["id"];
  out["has_more"] = more;
  return out;
}

bool cancel_batch(JobStore& js, const std::string& id) {
  const BatchRec b = need_batch(js, id);
  if (js.transition(id, {"validating", "in_progress"}, "cancelling")) return true;
  if (b.status != "cancelling" && b.status != "cancelled")
    throw RequestError(409, "Cannot cancel a batch with status '" + b.status + "'.", "", "batch_not_cancellable");
  return false;
}

}  // namespace exspec::jobs
