// Files and Batches helpers shared by the end-to-end tests: upload, create, poll, download, and
// completions lines whose answers are checked against the float64 oracle.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "tests/http/support.h"

namespace exspec::httptest {

std::string data_dir(const std::string& name);  // a fresh path under the scratch directory

// POST /v1/files (multipart, Content-Length); REQUIREs a 200 and returns the File object.
json upload(int port, const std::string& content, const std::string& purpose = "batch",
            const std::string& filename = "requests.jsonl");
// The raw upload request, for tests that expect it to fail.
HttpResult upload_raw(int port, const std::string& content, const std::string& purpose, const std::string& filename);
json create_batch(int port, const std::string& file_id, const std::string& endpoint = "/v1/completions");
json get_batch(int port, const std::string& id);
json wait_final(int port, const std::string& id, int timeout_s = 240);  // completed, failed, cancelled, expired
std::vector<json> download(int port, const json& file_id);             // JSONL lines; none for null

struct Lines {
  std::string jsonl;
  std::vector<std::vector<int64_t>> prompts;
};
// n completions lines (custom_id req-I) with distinct token-id prompts of varied length.
Lines completion_lines(int n, int64_t max_tokens);
// Every output line is a 200 equal to the oracle; returns the custom_ids seen (with repeats).
std::multiset<std::string> check_outputs(const std::vector<json>& out, const std::vector<OracleOut>& want);

}  // namespace exspec::httptest
