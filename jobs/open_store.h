// Which job store a server opens (jobs/job_store.h): apart from the interface, so that the two
// implementations include the interface and this file includes them, with no circle.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "jobs/job_store.h"

namespace exspec::jobs {

// "postgresql://..." or "postgres://...": PostgreSQL (replica names this process in leases and
// answers); otherwise SQLite in the data directory. Throws std::runtime_error saying what failed.
std::unique_ptr<JobStore> open_job_store(const std::string& job_store, const std::string& data_dir,
                                         const std::string& replica, int64_t lease_ms);

}  // namespace exspec::jobs
