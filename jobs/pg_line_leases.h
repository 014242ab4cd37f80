// Batch lines as leased rows of exspec_batch_lines (see LineLeases in jobs/job_store.h): claims
// take the lowest expired lines with SELECT ... FOR UPDATE SKIP LOCKED, so two replicas claiming
// at once never get the same line and never wait for each other; a lease is a timestamp of the
// database's clock, so replicas need no clock agreement. A row is deleted when its answer commits
// (PgJobStore::record_answer), in the same statement. libpq, torch-free.
#pragma once
#include <memory>
#include <string>

#include "jobs/job_store.h"
#include "jobs/pg_conn.h"

namespace exspec::jobs {

class PgLineLeases : public LineLeases {
 public:
  PgLineLeases(std::shared_ptr<PgPool> pool, std::string owner, int64_t lease_ms)
      : pool_(std::move(pool)), owner_(std::move(owner)), lease_ms_(lease_ms) {}
  bool start_lines(const std::string& batch_id, const std::vector<int64_t>& line_nos, int64_t total) override;
  std::vector<Claimed> claim(const std::string& batch_id, size_t n) override;
  void renew(const std::string& batch_id, const std::vector<int64_t>& line_nos) override;
  void release(const std::string& batch_id, const std::vector<int64_t>& line_nos) override;
  void release_all() override;
  int64_t open_lines(const std::string& batch_id) override;
  int64_t lease_ms() const override { return lease_ms_; }

 private:
  std::shared_ptr<PgPool> pool_;
  std::string owner_;
  int64_t lease_ms_;
};

}  // namespace exspec::jobs
