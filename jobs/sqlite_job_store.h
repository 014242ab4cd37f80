// The embedded job store: one SQLite database (WAL) plus the file contents under a data
// directory, for one process. Every answered batch line is committed together with its count, so
// a kill -9 at any moment loses nothing that was counted and a restart never answers a line twice
// (UNIQUE(batch_id, line_no)). One connection behind a mutex: the calls are short, and callers
// are the HTTP strands and the batch runner's thread. Torch-free.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jobs/job_store.h"

struct sqlite3;

namespace exspec::jobs {

class SqliteJobStore : public JobStore {
 public:
  // Opens (creating) DIR/exspec.db and DIR/files/, after PRAGMA quick_check: a damaged database
  // throws std::runtime_error naming the file and what to do, and nothing is written to it.
  explicit SqliteJobStore(const std::string& data_dir);
  // What does not match between the store and DIR/files/: files the store does not know (its
  // database was deleted or replaced) and files whose content is missing. One line each kind.
  std::vector<std::string> audit() override;
  ~SqliteJobStore() override;
  SqliteJobStore(const SqliteJobStore&) = delete;
  SqliteJobStore& operator=(const SqliteJobStore&) = delete;
  std::string where() const override { return dir_; }

  FileRec add_file(const std::string& purpose, const std::string& filename, const std::string& content) override;
  std::optional<FileRec> file(const std::string& id) override;
  std::vector<FileRec> files() override;
  bool delete_file(const std::string& id) override;
  std::string read_content(const FileRec& f) override;

  void add_batch(const BatchRec& b) override;
  std::optional<BatchRec> batch(const std::string& id) override;
  std::vector<BatchRec> batches(int64_t limit, const std::string& after, bool* has_more) override;
  std::vector<std::string> unfinished_batches() override;
  int64_t active_batch_count() override;
  bool transition(const std::string& id, const std::vector<std::string>& from, const std::string& to) override;
  void set_total(const std::string& id, int64_t total) override;
  void set_errors(const std::string& id, const std::string& errors_json) override;
  bool set_output_files(const std::string& id, const std::string& output_file_id,
                        const std::string& error_file_id) override;

  bool record_answer(const std::string& batch_id, const AnswerRec& a) override;
  std::set<int64_t> answered_lines(const std::string& batch_id) override;
  std::vector<AnswerRec> answers(const std::string& batch_id) override;

  void add_response(const ResponseRec& r) override;
  std::optional<ResponseRec> response(const std::string& id) override;
  bool delete_response(const std::string& id) override;

  const std::string& dir() const { return dir_; }

 private:
  void exec(const char* sql);
  void check_integrity(const std::string& db);
  std::string dir_;
  sqlite3* db_ = nullptr;
  std::mutex mu_;
};

}  // namespace exspec::jobs
