#include "jobs/pg_job_store.h"

#include <random>
#include <set>
#include <stdexcept>


#include "jobs/pg_line_leases.h"
#include "jobs/random_id.h"

namespace exspec::jobs {
namespace {

// Client bytes (file names, custom_ids, contents, response bodies) are bytea: PostgreSQL's text
// refuses NUL and invalid UTF-8, which SQLite keeps and a client may send.
const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS exspec_files (
  seq BIGSERIAL PRIMARY KEY, id TEXT UNIQUE NOT NULL, purpose TEXT NOT NULL, filename BYTEA NOT NULL,
  bytes BIGINT NOT NULL, created_at BIGINT NOT NULL, content BYTEA NOT NULL);
CREATE TABLE IF NOT EXISTS exspec_batches (
  seq BIGSERIAL PRIMARY KEY, id TEXT UNIQUE NOT NULL, status TEXT NOT NULL,
  input_file_id TEXT NOT NULL, endpoint TEXT NOT NULL, completion_window TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT 'null', total BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL DEFAULT 0, in_progress_at BIGINT NOT NULL DEFAULT 0,
  finalizing_at BIGINT NOT NULL DEFAULT 0, completed_at BIGINT NOT NULL DEFAULT 0,
  failed_at BIGINT NOT NULL DEFAULT 0, expired_at BIGINT NOT NULL DEFAULT 0,
  cancelling_at BIGINT NOT NULL DEFAULT 0, cancelled_at BIGINT NOT NULL DEFAULT 0,
  expires_at BIGINT NOT NULL DEFAULT 0, output_file_id TEXT NOT NULL DEFAULT '',
  error_file_id TEXT NOT NULL DEFAULT '', errors TEXT NOT NULL DEFAULT 'null');
CREATE TABLE IF NOT EXISTS exspec_answers (
  batch_id TEXT NOT NULL, line_no BIGINT NOT NULL, custom_id BYTEA NOT NULL, status_code INT NOT NULL,
  body BYTEA NOT NULL, error BYTEA NOT NULL, replica TEXT NOT NULL,
  answered_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (batch_id, line_no));
CREATE TABLE IF NOT EXISTS exspec_batch_lines (
  batch_id TEXT NOT NULL, line_no BIGINT NOT NULL, owner TEXT,
  lease_until TIMESTAMPTZ NOT NULL DEFAULT '-infinity', claims INT NOT NULL DEFAULT 0,
  PRIMARY KEY (batch_id, line_no));
CREATE TABLE IF NOT EXISTS exspec_responses (
  id TEXT PRIMARY KEY, created_at BIGINT NOT NULL, body TEXT NOT NULL, conversation TEXT NOT NULL);
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
             AND table_name = 'exspec_answers' AND column_name = 'ok') THEN
    ALTER TABLE exspec_answers ALTER COLUMN ok DROP NOT NULL;
  END IF;
END $$;
)sql";

// Counts come from the answers themselves (answer_counts_sql, as in SQLite): every replica
// computes the same figures. Tables written before have an ok column, which kSchema keeps but makes
// optional rather than dropping it: during a rolling upgrade the older replicas still insert it.
const std::string kBatchCols =
    "b.id, b.status, b.input_file_id, b.endpoint, b.completion_window, b.metadata, b.total, " +
    answer_counts_sql("exspec_answers") +
    ", b.created_at, b.in_progress_at, b.finalizing_at, b.completed_at, b.failed_at, b.expired_at, b.cancelling_at, "
    "b.cancelled_at, b.expires_at, b.output_file_id, b.error_file_id, b.errors";

BatchRec read_batch(const PgResult& r, int i) {
  BatchRec b;
  b.id = r.text(i, 0);
  b.status = r.text(i, 1);
  b.input_file_id = r.text(i, 2);
  b.endpoint = r.text(i, 3);
  b.completion_window = r.text(i, 4);
  b.metadata = r.text(i, 5);
  int64_t* nums[] = {&b.total,          &b.completed,   &b.failed,       &b.created_at,  &b.in_progress_at,
                     &b.finalizing_at,  &b.completed_at, &b.failed_at,   &b.expired_at,  &b.cancelling_at,
                     &b.cancelled_at,   &b.expires_at};
  for (int k = 0; k < 12; ++k) *nums[k] = r.i64(i, 6 + k);
  b.output_file_id = r.text(i, 18);
  b.error_file_id = r.text(i, 19);
  b.errors = r.text(i, 20);
  return b;
}

const char* kFileCols = "id, purpose, filename, bytes, created_at";

FileRec read_file_row(const PgResult& r, int i) {
  return FileRec{r.text(i, 0), r.text(i, 1), r.bytes(i, 2), "", r.i64(i, 3), r.i64(i, 4)};
}

std::string owner_token(const std::string& replica) {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string s = replica + "/";
  for (int i = 0; i < 8; ++i) s += hex[rd() % 16];
  return s;
}

}  // namespace

PgJobStore::PgJobStore(const std::string& url, const std::string& replica, int64_t lease_ms)
    : pool_(std::make_shared<PgPool>(url, 4)), owner_(owner_token(replica.empty() ? "replica" : replica)) {
  if (lease_ms < 100) throw std::runtime_error("the batch lease must be at least 100 ms");
  pool_->with([&](PgConn& c) {
    c.transaction([&] {
      // Replicas starting together would race on CREATE TABLE IF NOT EXISTS (a unique violation
      // in the catalog): one at a time.
      c.exec("SELECT pg_advisory_xact_lock(7214001)");
      c.run_script(kSchema);
    });
    const PgResult r = c.exec("SELECT current_database(), coalesce(inet_server_addr()::text, 'local socket')");
    where_ = "PostgreSQL database " + r.text(0, 0) + " (" + r.text(0, 1) + ")";
  });
  leases_ = std::make_unique<PgLineLeases>(pool_, owner_, lease_ms);
}

PgJobStore::~PgJobStore() = default;

LineLeases* PgJobStore::leases() { return leases_.get(); }

FileRec PgJobStore::add_file(const std::string& purpose, const std::string& filename, const std::string& content) {
  FileRec f{random_id("file-"), purpose, filename, "", static_cast<int64_t>(content.size()), now()};
  // The content and its row commit together: no row without content, no orphan content.
  pool_->with([&](PgConn& c) {
    c.exec("INSERT INTO exspec_files (id, purpose, filename, bytes, created_at, content) VALUES ($1,$2,$3,$4,$5,$6)",
           {pg_text(f.id), pg_text(purpose), pg_bytes(filename), pg_int(f.bytes), pg_int(f.created_at),
            pg_bytes(content)});
  });
  return f;
}

std::optional<FileRec> PgJobStore::file(const std::string& id) {
  PgResult r = pool_->with([&](PgConn& c) {
    return c.exec(std::string("SELECT ") + kFileCols + " FROM exspec_files WHERE id = $1", {pg_text(id)});
  });
  if (r.rows() == 0) return std::nullopt;
  return read_file_row(r, 0);
}

std::vector<FileRec> PgJobStore::files() {
  PgResult r = pool_->with([&](PgConn& c) {
    return c.exec(std::string("SELECT ") + kFileCols + " FROM exspec_files ORDER BY created_at DESC, seq DESC");
  });
  std::vector<FileRec> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(read_file_row(r, i));
  return out;
}

bool PgJobStore::delete_file(const std::string& id) {
  return pool_->with([&](PgConn& c) {
    return c.exec("DELETE FROM exspec_files WHERE id = $1", {pg_text(id)}).affected() == 1;
  });
}

std::string PgJobStore::read_content(const FileRec& f) {
  // A binary result: the bytes come as they are, not as hex text of twice the size.
  PgResult r = pool_->with([&](PgConn& c) {
    return c.exec("SELECT content FROM exspec_files WHERE id = $1", {pg_text(f.id)}, true);
  });
  if (r.rows() == 0) throw std::runtime_error("the file " + f.id + " was deleted");
  return r.bytes(0, 0);
}

void PgJobStore::add_batch(const BatchRec& b) {
  pool_->with([&](PgConn& c) {
    c.exec("INSERT INTO exspec_batches (id, status, input_file_id, endpoint, completion_window, metadata, created_at, "
           "expires_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)",
           {pg_text(b.id), pg_text(b.status), pg_text(b.input_file_id), pg_text(b.endpoint),
            pg_text(b.completion_window), pg_text(b.metadata), pg_int(b.created_at), pg_int(b.expires_at)});
  });
}

std::optional<BatchRec> PgJobStore::batch(const std::string& id) {
  PgResult r = pool_->with([&](PgConn& c) {
    return c.exec("SELECT " + kBatchCols + " FROM exspec_batches b WHERE b.id = $1", {pg_text(id)});
  });
  if (r.rows() == 0) return std::nullopt;
  return read_batch(r, 0);
}

std::vector<BatchRec> PgJobStore::batches(int64_t limit, const std::string& after, bool* has_more) {
  PgResult r = pool_->with([&](PgConn& c) {
    return c.exec("SELECT " + kBatchCols +
                      " FROM exspec_batches b WHERE b.seq < coalesce((SELECT seq FROM exspec_batches WHERE id = $1), "
                      "9223372036854775807) ORDER BY b.seq DESC LIMIT $2",
                  {pg_text(after), pg_int(limit + 1)});
  });
  std::vector<BatchRec> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(read_batch(r, i));
  *has_more = static_cast<int64_t>(out.size()) > limit;
  if (*has_more) out.pop_back();
  return out;
}

std::vector<std::string> PgJobStore::unfinished_batches() {
  PgResult r = pool_->with([&](PgConn& c) {
    return c.exec("SELECT id FROM exspec_batches WHERE status IN ('validating','in_progress','finalizing','cancelling') "
                  "ORDER BY seq");
  });
  std::vector<std::string> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(r.text(i, 0));
  return out;
}

int64_t PgJobStore::active_batch_count() { return static_cast<int64_t>(unfinished_batches().size()); }

bool PgJobStore::transition(const std::string& id, const std::vector<std::string>& from, const std::string& to) {
  static const std::set<std::string> stamped{"in_progress", "finalizing", "completed", "failed",
                                             "expired",     "cancelling", "cancelled"};
  static const std::set<std::string> final_states{"completed", "failed", "expired", "cancelled"};
  if (!stamped.count(to)) throw std::logic_error("bad batch status " + to);
  return pool_->with([&](PgConn& c) {
    return c.transaction([&] {
      const bool moved = c.exec("UPDATE exspec_batches SET status = $1, " + to + "_at = $2 WHERE id = $3 AND "
                                "status = ANY($4::text[])",
                                {pg_text(to), pg_int(now()), pg_text(id), pg_text(pg_array(from))})
                             .affected() == 1;
      // A finished batch leaves no lines for anyone to claim.
      if (moved && final_states.count(to)) c.exec("DELETE FROM exspec_batch_lines WHERE batch_id = $1", {pg_text(id)});
      return moved;
    });
  });
}

void PgJobStore::set_total(const std::string& id, int64_t total) {
  pool_->with([&](PgConn& c) {
    c.exec("UPDATE exspec_batches SET total = $2 WHERE id = $1", {pg_text(id), pg_int(total)});
  });
}

void PgJobStore::set_errors(const std::string& id, const std::string& errors_json) {
  pool_->with([&](PgConn& c) {
    c.exec("UPDATE exspec_batches SET errors = $2 WHERE id = $1", {pg_text(id), pg_text(errors_json)});
  });
}

bool PgJobStore::set_output_files(const std::string& id, const std::string& output_file_id,
                                  const std::string& error_file_id) {
  return pool_->with([&](PgConn& c) {
    return c.exec("UPDATE exspec_batches SET output_file_id = $2, error_file_id = $3 WHERE id = $1 AND "
                  "output_file_id = '' AND error_file_id = ''",
                  {pg_text(id), pg_text(output_file_id), pg_text(error_file_id)})
               .affected() == 1;
  });
}

bool PgJobStore::record_answer(const std::string& batch_id, const AnswerRec& a) {
  // One statement: the batch row is share-locked while it is still running (a cancel waits for
  // this answer, and no answer lands after it), the answer is inserted unless the line has one,
  // and the line's lease row goes with it.
  return pool_->with([&](PgConn& c) {
    return c.exec(
               "WITH b AS (SELECT 1 FROM exspec_batches WHERE id = $1 AND status IN ('validating','in_progress') "
               "           FOR SHARE), "
               "ins AS (INSERT INTO exspec_answers (batch_id, line_no, custom_id, status_code, body, error, replica) "
               "        SELECT $1, $2, $3, $4, $5, $6, $7 FROM b ON CONFLICT (batch_id, line_no) DO NOTHING "
               "        RETURNING 1), "
               "del AS (DELETE FROM exspec_batch_lines WHERE batch_id = $1 AND line_no = $2 "
               "        AND EXISTS (SELECT 1 FROM ins)) "
               "SELECT count(*) FROM ins",
               {pg_text(batch_id), pg_int(a.line_no), pg_bytes(a.custom_id), pg_int(a.status_code), pg_bytes(a.body),
                pg_bytes(a.error), pg_text(owner_)})
               .i64(0, 0) == 1;
  });
}

std::set<int64_t> PgJobStore::answered_lines(const std::string& batch_id) {
  PgResult r = pool_->with([&](PgConn& c) {
    return c.exec("SELECT line_no FROM exspec_answers WHERE batch_id = $1", {pg_text(batch_id)});
  });
  std::set<int64_t> out;
  for (int i = 0; i < r.rows(); ++i) out.insert(r.i64(i, 0));
  return out;
}

std::vector<AnswerRec> PgJobStore::answers(const std::string& batch_id) {
  PgResult r = pool_->with([&](PgConn& c) {
    return c.exec("SELECT line_no, custom_id, status_code, body, error FROM exspec_answers WHERE batch_id = $1 "
                  "ORDER BY line_no",
                  {pg_text(batch_id)});
  });
  std::vector<AnswerRec> out;
  for (int i = 0; i < r.rows(); ++i)
    out.push_back(AnswerRec{r.i64(i, 0), r.bytes(i, 1), static_cast<int>(r.i64(i, 2)), r.bytes(i, 3), r.bytes(i, 4)});
  return out;
}

void PgJobStore::add_response(const ResponseRec& r) {
  pool_->with([&](PgConn& c) {
    c.exec("DELETE FROM exspec_responses WHERE created_at < $1", {pg_int(now() - kResponseRetentionS)});
    c.exec("INSERT INTO exspec_responses (id, created_at, body, conversation) VALUES ($1, $2, $3, $4)",
           {pg_text(r.id), pg_int(r.created_at), pg_text(r.body), pg_text(r.conversation)});
    return 0;
  });
}

std::optional<ResponseRec> PgJobStore::response(const std::string& id) {
  PgResult r = pool_->with([&](PgConn& c) {
    return c.exec("SELECT id, created_at, body, conversation FROM exspec_responses WHERE id = $1 AND created_at >= $2",
                  {pg_text(id), pg_int(now() - kResponseRetentionS)});
  });
  if (r.rows() == 0) return std::nullopt;
  return ResponseRec{r.text(0, 0), r.i64(0, 1), r.text(0, 2), r.text(0, 3)};
}

bool PgJobStore::delete_response(const std::string& id) {
  return pool_->with([&](PgConn& c) {
    return c.exec("DELETE FROM exspec_responses WHERE id = $1", {pg_text(id)}).affected() == 1;
  });
}

}  // namespace exspec::jobs
