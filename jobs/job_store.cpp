#include "jobs/job_store.h"

#include <chrono>

namespace exspec::jobs {

int64_t JobStore::now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string answer_counts_sql(const std::string& answers) {
  // length(error) = 0: an empty error, whether the column is text (SQLite) or bytea (PostgreSQL).
  const std::string ok = "a.status_code = 200 AND length(a.error) = 0";
  const std::string count = "(SELECT count(*) FROM " + answers + " a WHERE a.batch_id = b.id AND ";
  return count + ok + "), " + count + "NOT (" + ok + "))";
}

}  // namespace exspec::jobs
