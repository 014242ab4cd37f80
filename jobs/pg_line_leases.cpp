#include "jobs/pg_line_leases.h"

#include <algorithm>

namespace exspec::jobs {

bool PgLineLeases::start_lines(const std::string& batch_id, const std::vector<int64_t>& line_nos, int64_t total) {
  return pool_->with([&](PgConn& c) {
    return c.transaction([&] {
      // The batch row's lock orders this against another replica validating the same batch.
      PgResult s = c.exec("SELECT status FROM exspec_batches WHERE id = $1 FOR UPDATE", {pg_text(batch_id)});
      if (s.rows() != 1 || s.text(0, 0) != "validating") return false;
      c.exec("INSERT INTO exspec_batch_lines (batch_id, line_no) SELECT $1, unnest($2::bigint[]) "
             "ON CONFLICT DO NOTHING",
             {pg_text(batch_id), pg_text(pg_array(line_nos))});
      c.exec("UPDATE exspec_batches SET total = $2, status = 'in_progress', in_progress_at = $3 WHERE id = $1",
             {pg_text(batch_id), pg_int(total), pg_int(JobStore::now())});
      return true;
    });
  });
}

std::vector<LineLeases::Claimed> PgLineLeases::claim(const std::string& batch_id, size_t n) {
  if (n == 0) return {};
  // SKIP LOCKED: rows another replica is claiming right now are passed over, not waited for.
  PgResult r = pool_->with([&](PgConn& c) {
    return c.exec(
        "UPDATE exspec_batch_lines l SET owner = $2, lease_until = clock_timestamp() + $3 * interval '1 millisecond', "
        "claims = l.claims + 1 "
        "FROM (SELECT line_no FROM exspec_batch_lines WHERE batch_id = $1 AND lease_until < clock_timestamp() "
        "      ORDER BY line_no LIMIT $4 FOR UPDATE SKIP LOCKED) c "
        "WHERE l.batch_id = $1 AND l.line_no = c.line_no RETURNING l.line_no, l.claims > 1",
        {pg_text(batch_id), pg_text(owner_), pg_int(lease_ms_), pg_int(static_cast<int64_t>(n))});
  });
  std::vector<Claimed> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(Claimed{r.i64(i, 0), r.boolean(i, 1)});
  std::sort(out.begin(), out.end(), [](const Claimed& a, const Claimed& b) { return a.line_no < b.line_no; });
  return out;
}

void PgLineLeases::renew(const std::string& batch_id, const std::vector<int64_t>& line_nos) {
  if (line_nos.empty()) return;
  // Only rows still ours: a line whose lease ran out and that another replica claimed stays theirs.
  pool_->with([&](PgConn& c) {
    c.exec("UPDATE exspec_batch_lines SET lease_until = clock_timestamp() + $3 * interval '1 millisecond' "
           "WHERE batch_id = $1 AND owner = $2 AND line_no = ANY($4::bigint[])",
           {pg_text(batch_id), pg_text(owner_), pg_int(lease_ms_), pg_text(pg_array(line_nos))});
  });
}

void PgLineLeases::release(const std::string& batch_id, const std::vector<int64_t>& line_nos) {
  if (line_nos.empty()) return;
  pool_->with([&](PgConn& c) {
    c.exec("UPDATE exspec_batch_lines SET owner = NULL, lease_until = '-infinity' "
           "WHERE batch_id = $1 AND owner = $2 AND line_no = ANY($3::bigint[])",
           {pg_text(batch_id), pg_text(owner_), pg_text(pg_array(line_nos))});
  });
}

void PgLineLeases::release_all() {
  pool_->with([&](PgConn& c) {
    c.exec("UPDATE exspec_batch_lines SET owner = NULL, lease_until = '-infinity' WHERE owner = $1", {pg_text(owner_)});
  });
}

int64_t PgLineLeases::open_lines(const std::string& batch_id) {
  return pool_->with([&](PgConn& c) {
    return c.exec("SELECT count(*) FROM exspec_batch_lines WHERE batch_id = $1", {pg_text(batch_id)}).i64(0, 0);
  });
}

}  // namespace exspec::jobs
