#include "jobs/batch_lines.h"

#include <map>

#include "jobs/json_text.h"

namespace exspec::jobs {
using nlohmann::ordered_json;

namespace {

std::string invalid_error(const std::string& message) {
  return ordered_json{{"code", "invalid_request"}, {"message", message}}.dump();
}

// Why a line is not a valid request, or "" when it is.
std::string check_line(const ordered_json& j, const std::string& endpoint) {
  if (!j.is_object()) return "the line is not a JSON object";
  if (!j.contains("custom_id") || !j["custom_id"].is_string() || j["custom_id"].get<std::string>().empty())
    return "'custom_id' must be a non-empty string";
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "custom_id" && it.key() != "method" && it.key() != "url" && it.key() != "body")
      return "unknown field '" + it.key() + "' (a line has custom_id, method, url, body)";
  if (!j.contains("method") || j["method"] != "POST") return "'method' must be \"POST\"";
  if (!j.contains("url") || !j["url"].is_string()) return "'url' must be a string";
  if (endpoint.empty() && j["url"] != "/v1/completions" && j["url"] != "/v1/chat/completions")
    return "'url' must be /v1/completions or /v1/chat/completions";
  if (!endpoint.empty() && j["url"] != endpoint)
    return "'url' is " + j["url"].get<std::string>() + " but the batch's endpoint is " + endpoint;
  if (!j.contains("body") || !j["body"].is_object()) return "'body' must be a JSON object";
  if (j["body"].contains("stream") && j["body"]["stream"] == true) return "'body.stream' must not be true in a batch";
  return "";
}

}  // namespace

ParsedBatch parse_batch_file(const std::string& content, const std::string& endpoint, size_t max_lines) {
  ParsedBatch out;
  std::map<std::string, int64_t> seen;
  ordered_json dup_errors = ordered_json::array();
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < content.size()) {
    size_t eol = content.find('\n', pos);
    if (eol == std::string::npos) eol = content.size();
    std::string line = content.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    ordered_json j;
    std::string why;
    try {
      j = parse_json_text(line);
      why = check_line(j, endpoint);
    } catch (const JsonBodyError& e) {
      why = std::string("the line is not valid JSON: ") + e.what();
    }
    std::string cid;
    if (j.is_object() && j.contains("custom_id") && j["custom_id"].is_string()) cid = j["custom_id"];
    if (!cid.empty()) {
      auto [it, fresh] = seen.emplace(cid, line_no);
      if (!fresh)
        dup_errors.push_back(ordered_json{{"code", "duplicate_custom_id"},
                                          {"message", "custom_id '" + cid + "' is also on line " +
                                                          std::to_string(it->second)},
                                          {"param", "custom_id"},
                                          {"line", line_no}});
    }
    if (!why.empty()) {
      out.invalid.push_back(AnswerRec{line_no, cid, 0, "", invalid_error(why)});
      continue;
    }
    out.lines.push_back(BatchLine{line_no, cid, j["url"], j["body"]});
  }
  auto fail = [&](const ordered_json& data) { out.fatal = ordered_json{{"object", "list"}, {"data", data}}; };
  if (!dup_errors.empty()) {
    fail(dup_errors);
  } else if (out.total() == 0) {
    fail(ordered_json::array({ordered_json{{"code", "empty_file"}, {"message", "the input file has no requests"},
                                   {"param", "input_file_id"}, {"line", nullptr}}}));
  } else if (static_cast<size_t>(out.total()) > max_lines) {
    fail(ordered_json::array({ordered_json{{"code", "too_many_requests"},
                                   {"message", "the input file has " + std::to_string(out.total()) +
                                                   " requests; the limit is " + std::to_string(max_lines) +
                                                   " (limits.max_batch_lines)"},
                                   {"param", "input_file_id"},
                                   {"line", nullptr}}}));
  }
  return out;
}

std::string output_line(const std::string& batch_id, const AnswerRec& a) {
  // Stable ids: a resumed batch writes the same ones.
  const std::string suffix = batch_id.rfind("batch_", 0) == 0 ? batch_id.substr(6) : batch_id;
  ordered_json j{{"id", "batch_req_" + suffix + "_" + std::to_string(a.line_no)}, {"custom_id", a.custom_id}};
  if (a.status_code != 0) {
    ordered_json body = a.body.empty() ? ordered_json(nullptr) : ordered_json::parse(a.body);
    std::string rid = "req_" + suffix + "_" + std::to_string(a.line_no);
    if (body.is_object() && body.contains("id") && body["id"].is_string()) rid = body["id"];
    j["response"] = ordered_json{{"status_code", a.status_code}, {"request_id", rid}, {"body", body}};
  } else {
    j["response"] = nullptr;
  }
  j["error"] = a.error.empty() ? ordered_json(nullptr) : ordered_json::parse(a.error);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace exspec::jobs
