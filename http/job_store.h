// Durable state of the Files and Batches APIs: one SQLite database (WAL) plus the file contents
// under a data directory. Every answered batch line is committed together with its count, so a
// kill -9 at any moment loses nothing that was counted and a restart never answers a line twice
// (UNIQUE(batch_id, line_no)). One connection behind a mutex: the calls are short, and callers
// are the HTTP strands and the batch runner's thread. Torch-free.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

struct sqlite3;

namespace exspec::http {

struct FileRec {
  std::string id, purpose, filename;
  std::string path;  // where the content is: DIR/files/ID (the store records it relative to DIR)
  int64_t bytes = 0, created_at = 0;
};

struct BatchRec {
  std::string id, status, input_file_id, endpoint, completion_window;
  std::string metadata = "null";  // JSON text
  std::string errors = "null";    // JSON text: null or {"object":"list","data":[...]}
  int64_t total = 0, completed = 0, failed = 0;
  int64_t created_at = 0, in_progress_at = 0, finalizing_at = 0, completed_at = 0, failed_at = 0, expired_at = 0,
          cancelling_at = 0, cancelled_at = 0, expires_at = 0;  // 0: not yet (null in JSON)
  std::string output_file_id, error_file_id;
};

struct AnswerRec {
  int64_t line_no = 0;
  std::string custom_id;
  int status_code = 0;  // 0: the line never reached the endpoint (invalid line)
  std::string body;     // JSON text of the endpoint's response, or empty
  std::string error;    // JSON text {code, message}, or empty
};

class JobStore {
 public:
  // Opens (creating) DIR/exspec.db and DIR/files/, after PRAGMA quick_check: a damaged database
  // throws std::runtime_error naming the file and what to do, and nothing is written to it.
  explicit JobStore(const std::string& data_dir);
  // What does not match between the store and DIR/files/: files the store does not know (its
  // database was deleted or replaced) and files whose content is missing. One line each kind.
  std::vector<std::string> audit();
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  static int64_t now();
  static std::string new_id(const char* prefix);

  // Files. The content is written (and fsync'ed) before the row exists, so a row always has its file.
  FileRec add_file(const std::string& purpose, const std::string& filename, const std::string& content);
  std::optional<FileRec> file(const std::string& id);
  std::vector<FileRec> files();
  bool delete_file(const std::string& id);
  std::string read_content(const FileRec& f);

  // Batches.
  void add_batch(const BatchRec& b);
  std::optional<BatchRec> batch(const std::string& id);
  // Newest first; `after` is the id of the last batch of the previous page.
  std::vector<BatchRec> batches(int64_t limit, const std::string& after, bool* has_more);
  std::vector<std::string> unfinished_batches();  // validating, in_progress, finalizing, cancelling; oldest first
  int64_t active_batch_count();
  // Moves a batch to `to` (stamping its timestamp) only if its status is one of `from`.
  bool transition(const std::string& id, const std::vector<std::string>& from, const std::string& to);
  void set_total(const std::string& id, int64_t total);
  void set_errors(const std::string& id, const std::string& errors_json);
  void set_output_files(const std::string& id, const std::string& output_file_id, const std::string& error_file_id);

  // Answers. Inserts the line and bumps the batch's count in one transaction; false (and nothing
  // changes) when the line was already answered.
  bool record_answer(const std::string& batch_id, const AnswerRec& a);
  std::set<int64_t> answered_lines(const std::string& batch_id);
  std::vector<AnswerRec> answers(const std::string& batch_id);  // in line order

  const std::string& dir() const { return dir_; }

 private:
  void exec(const char* sql);
  void check_integrity(const std::string& db);
  std::string dir_;
  sqlite3* db_ = nullptr;
  std::mutex mu_;
};

}  // namespace exspec::http
