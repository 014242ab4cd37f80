#include "jobs/open_store.h"

#include <stdexcept>

#include "jobs/pg_job_store.h"
#include "jobs/sqlite_job_store.h"

namespace exspec::jobs {

std::unique_ptr<JobStore> open_job_store(const std::string& job_store, const std::string& data_dir,
                                         const std::string& replica, int64_t lease_ms) {
  if (job_store.rfind("postgresql://", 0) == 0 || job_store.rfind("postgres://", 0) == 0)
    return std::make_unique<PgJobStore>(job_store, replica, lease_ms);
  if (!job_store.empty())
    throw std::runtime_error("job_store must be a postgresql://... URL (or empty for SQLite in the data directory), "
                             "not '" + job_store + "'");
  return std::make_unique<SqliteJobStore>(data_dir);
}

}  // namespace exspec::jobs
