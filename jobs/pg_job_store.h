// The shared job store: files (content included), batches, answers and the batch lines still to
// run, all in one PostgreSQL database, so that every replica behind the load balancer sees every
// file and batch and any of them may run any line. Counts are computed from the answers table;
// an answer commits under PRIMARY KEY (batch_id, line_no) and only while its batch is running, so
// a line is answered exactly once and nothing lands after a cancel. Lines are handed out with
// leases (jobs/pg_line_leases.h). libpq, torch-free.
#pragma once
#include <memory>
#include <string>

#include "jobs/job_store.h"
#include "jobs/pg_conn.h"

namespace exspec::jobs {

class PgLineLeases;

class PgJobStore : public JobStore {
 public:
  // Connects (throws std::runtime_error if it cannot) and creates the tables if they are missing
  // (under an advisory lock: replicas may start together). `replica` names this process in leases
  // and answers; lease_ms is how long a claimed line stays ours without renewal.
  PgJobStore(const std::string& url, const std::string& replica, int64_t lease_ms);
  ~PgJobStore() override;
  std::string where() const override { return where_; }

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

  LineLeases* leases() override;

 private:
  std::shared_ptr<PgPool> pool_;
  std::string owner_, where_;
  std::unique_ptr<PgLineLeases> leases_;
};

}  // namespace exspec::jobs
