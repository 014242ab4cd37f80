// Reading a batch input file (JSONL, one {custom_id, method, url, body} per line) and writing
// the output lines. Shared by the batch runner and validation; deterministic, so a resumed
// batch numbers its lines exactly as the first run did. Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobs/job_store.h"

namespace exspec::jobs {

struct BatchLine {
  int64_t line_no = 0;  // 1-based physical line in the file
  std::string custom_id;
  std::string url;  // the endpoint: /v1/completions or /v1/chat/completions
  nlohmann::ordered_json body;
};

struct ParsedBatch {
  std::vector<BatchLine> lines;     // well-formed lines
  std::vector<AnswerRec> invalid;   // malformed lines, as answers with an error (go to the error file)
  nlohmann::ordered_json fatal = nullptr;   // the batch fails validation: {"object":"list","data":[...]}
  int64_t total() const { return static_cast<int64_t>(lines.size() + invalid.size()); }
};

// `endpoint` empty: each line may name either endpoint (the offline command).
// Blank lines are skipped (not counted). Duplicate custom_ids, an empty file, or more than
// max_lines requests make the whole batch fail (fatal).
ParsedBatch parse_batch_file(const std::string& content, const std::string& endpoint, size_t max_lines);

// One output line: {"id", "custom_id", "response": {status_code, request_id, body} | null, "error"}.
std::string output_line(const std::string& batch_id, const AnswerRec& a);

}  // namespace exspec::jobs
