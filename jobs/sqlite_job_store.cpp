#include "jobs/sqlite_job_store.h"
#include "jobs/random_id.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <sqlite3.h>

namespace exspec::jobs {
namespace fs = std::filesystem;

namespace {

// A prepared statement that finalizes itself; bind by 1-based index.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("sqlite prepare: ") + sqlite3_errmsg(db) + " in " + sql);
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt& bind(int i, const std::string& s) {
    sqlite3_bind_text(st_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
  }
  // true: a row is ready; false: done.
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw std::runtime_error(std::string("sqlite step: ") + sqlite3_errmsg(db_));
  }
  std::string text(int c) {
    const unsigned char* t = sqlite3_column_text(st_, c);
    return t ? std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(st_, c)) : std::string();
  }
  int64_t i64(int c) { return sqlite3_column_int64(st_, c); }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS files (
  id TEXT PRIMARY KEY, purpose TEXT NOT NULL, filename TEXT NOT NULL, bytes INTEGER NOT NULL,
  created_at INTEGER NOT NULL, path TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS batches (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, status TEXT NOT NULL,
  input_file_id TEXT NOT NULL, endpoint TEXT NOT NULL, completion_window TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT 'null', total INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL DEFAULT 0, in_progress_at INTEGER NOT NULL DEFAULT 0,
  finalizing_at INTEGER NOT NULL DEFAULT 0, completed_at INTEGER NOT NULL DEFAULT 0,
  failed_at INTEGER NOT NULL DEFAULT 0, expired_at INTEGER NOT NULL DEFAULT 0,
  cancelling_at INTEGER NOT NULL DEFAULT 0, cancelled_at INTEGER NOT NULL DEFAULT 0,
  expires_at INTEGER NOT NULL DEFAULT 0, output_file_id TEXT NOT NULL DEFAULT '',
  error_file_id TEXT NOT NULL DEFAULT '', errors TEXT NOT NULL DEFAULT 'null');
CREATE TABLE IF NOT EXISTS answers (
  batch_id TEXT NOT NULL, line_no INTEGER NOT NULL, custom_id TEXT NOT NULL,
  status_code INTEGER NOT NULL, body TEXT NOT NULL, error TEXT NOT NULL,
  UNIQUE(batch_id, line_no));
CREATE TABLE IF NOT EXISTS responses (
  id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, body TEXT NOT NULL, conversation TEXT NOT NULL);
)sql";

// The counts come from the answers (answer_counts_sql), as in the shared store. (Stores written
// before kept completed and failed columns as counters: they are no longer read.)
const std::string kBatchCols =
    "b.id, b.status, b.input_file_id, b.endpoint, b.completion_window, b.metadata, b.total, " +
    answer_counts_sql("answers") +
    ", b.created_at, b.in_progress_at, b.finalizing_at, b.completed_at, b.failed_at, b.expired_at, b.cancelling_at, "
    "b.cancelled_at, b.expires_at, b.output_file_id, b.error_file_id, b.errors";

BatchRec read_batch(Stmt& s) {
  BatchRec b;
  b.id = s.text(0);
  b.status = s.text(1);
  b.input_file_id = s.text(2);
  b.endpoint = s.text(3);
  b.completion_window = s.text(4);
  b.metadata = s.text(5);
  b.total = s.i64(6);
  b.completed = s.i64(7);
  b.failed = s.i64(8);
  b.created_at = s.i64(9);
  b.in_progress_at = s.i64(10);
  b.finalizing_at = s.i64(11);
  b.completed_at = s.i64(12);
  b.failed_at = s.i64(13);
  b.expired_at = s.i64(14);
  b.cancelling_at = s.i64(15);
  b.cancelled_at = s.i64(16);
  b.expires_at = s.i64(17);
  b.output_file_id = s.text(18);
  b.error_file_id = s.text(19);
  b.errors = s.text(20);
  return b;
}

// The content lives at DIR/files/ID whatever the row's path column says: stores written before
// paths were relative hold absolute ones, which break when the data directory moves.
FileRec read_file_row(Stmt& s, const std::string& dir) {
  return FileRec{s.text(0), s.text(1), s.text(2), (fs::path(dir) / "files" / s.text(0)).string(), s.i64(3), s.i64(4)};
}

// Writes and fsyncs: the row that names the file is committed only after its bytes are durable.
void write_durably(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  size_t off = 0;
  while (off < content.size()) {
    const ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      ::close(fd);
      throw std::runtime_error("cannot write " + path);
    }
    off += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

SqliteJobStore::SqliteJobStore(const std::string& data_dir) : dir_(data_dir) {
  fs::create_directories(fs::path(dir_) / "files");
  const std::string db = (fs::path(dir_) / "exspec.db").string();
  if (sqlite3_open_v2(db.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("cannot open " + db + ": " + why);
  }
  sqlite3_busy_timeout(db_, 5000);
  try {
    check_integrity(db);
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
  // WAL: readers never block the writer; synchronous=FULL: a committed answer survives power loss
  // too, not only a killed process.
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=FULL");
  exec(kSchema);
}

SqliteJobStore::~SqliteJobStore() { sqlite3_close(db_); }

void SqliteJobStore::check_integrity(const std::string& db) {
  std::string problems;
  try {
    Stmt s(db_, "PRAGMA quick_check");
    for (int rows = 0; s.step() && rows < 5; ++rows) problems += (rows ? "; " : "") + s.text(0);
  } catch (const std::exception& e) {  // not a database at all, or unreadable
    problems = e.what();
  }
  if (problems == "ok") return;
  throw std::runtime_error(
      db + " is damaged (" + problems + "). exspec does not start on a damaged store, so that nothing more is lost: "
      "stop, restore exspec.db from a backup, or move the data directory aside and start with an empty one (sqlite3's "
      ".recover can salvage rows from the damaged copy)");
}

std::vector<std::string> SqliteJobStore::audit() {
  std::set<std::string> known;
  for (const FileRec& f : files()) known.insert(f.id);
  std::vector<std::string> orphans, missing;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir_) / "files", ec))
    if (!known.erase(e.path().filename().string())) orphans.push_back(e.path().filename().string());
  missing.assign(known.begin(), known.end());  // what is left: rows without content
  std::sort(orphans.begin(), orphans.end());
  auto listed = [](const std::vector<std::string>& ids) {
    std::string s;
    for (size_t i = 0; i < ids.size() && i < 10; ++i) s += (i ? ", " : "") + ids[i];
    return ids.size() > 10 ? s + ", ..." : s;
  };
  const std::string files_dir = (fs::path(dir_) / "files").string();
  std::vector<std::string> out;
  if (!orphans.empty())
    out.push_back(std::to_string(orphans.size()) + " files in " + files_dir + " are not in the store (" +
                  listed(orphans) + "): exspec.db was deleted, emptied or replaced? They are not served; restore "
                  "exspec.db from a backup to get them back");
  if (!missing.empty())
    out.push_back(std::to_string(missing.size()) + " files of the store have no content in " + files_dir + " (" +
                  listed(missing) + "): downloads of them fail, and batches reading them end failed");
  return out;
}

void SqliteJobStore::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err ? err : "?";
    sqlite3_free(err);
    throw std::runtime_error("sqlite: " + why);
  }
}

FileRec SqliteJobStore::add_file(const std::string& purpose, const std::string& filename, const std::string& content) {
  FileRec f;
  f.id = random_id("file-");
  f.purpose = purpose;
  f.filename = filename;
  f.bytes = static_cast<int64_t>(content.size());
  f.created_at = now();
  f.path = (fs::path(dir_) / "files" / f.id).string();
  write_durably(f.path, content);
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "INSERT INTO files (id, purpose, filename, bytes, created_at, path) VALUES (?,?,?,?,?,?)");
  // Relative to the data directory, so that the directory can be moved or restored elsewhere.
  s.bind(1, f.id).bind(2, f.purpose).bind(3, f.filename).bind(4, f.bytes).bind(5, f.created_at);
  s.bind(6, "files/" + f.id).step();
  return f;
}

std::optional<FileRec> SqliteJobStore::file(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "SELECT id, purpose, filename, bytes, created_at, path FROM files WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_file_row(s, dir_);
}

std::vector<FileRec> SqliteJobStore::files() {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "SELECT id, purpose, filename, bytes, created_at, path FROM files ORDER BY created_at DESC, rowid DESC");
  std::vector<FileRec> out;
  while (s.step()) out.push_back(read_file_row(s, dir_));
  return out;
}

bool SqliteJobStore::delete_file(const std::string& id) {
  const std::string path = (fs::path(dir_) / "files" / id).string();
  {
    std::lock_guard<std::mutex> lock(mu_);
    Stmt q(db_, "SELECT id FROM files WHERE id = ?");
    q.bind(1, id);
    if (!q.step()) return false;
    Stmt d(db_, "DELETE FROM files WHERE id = ?");
    d.bind(1, id).step();
  }
  std::error_code ec;
  fs::remove(path, ec);  // the row is gone first: a crash here leaves only an orphan file
  return true;
}

std::string SqliteJobStore::read_content(const FileRec& f) {
  std::ifstream in(f.path, std::ios::binary);
  if (!in) throw ContentMissing(f.id, f.path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void SqliteJobStore::add_batch(const BatchRec& b) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_,
         "INSERT INTO batches (id, status, input_file_id, endpoint, completion_window, metadata, created_at, "
         "expires_at) VALUES (?,?,?,?,?,?,?,?)");
  s.bind(1, b.id).bind(2, b.status).bind(3, b.input_file_id).bind(4, b.endpoint).bind(5, b.completion_window);
  s.bind(6, b.metadata).bind(7, b.created_at).bind(8, b.expires_at).step();
}

std::optional<BatchRec> SqliteJobStore::batch(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, ("SELECT " + kBatchCols + " FROM batches b WHERE b.id = ?").c_str());
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_batch(s);
}

std::vector<BatchRec> SqliteJobStore::batches(int64_t limit, const std::string& after, bool* has_more) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t below = INT64_MAX;
  if (!after.empty()) {
    Stmt q(db_, "SELECT seq FROM batches WHERE id = ?");
    q.bind(1, after);
    if (q.step()) below = q.i64(0);
  }
  Stmt s(db_, ("SELECT " + kBatchCols + " FROM batches b WHERE b.seq < ? ORDER BY b.seq DESC LIMIT ?").c_str());
  s.bind(1, below).bind(2, limit + 1);
  std::vector<BatchRec> out;
  while (s.step()) out.push_back(read_batch(s));
  *has_more = static_cast<int64_t>(out.size()) > limit;
  if (*has_more) out.pop_back();
  return out;
}

std::vector<std::string> SqliteJobStore::unfinished_batches() {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_,
         "SELECT id FROM batches WHERE status IN ('validating','in_progress','finalizing','cancelling') ORDER BY seq");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

int64_t SqliteJobStore::active_batch_count() { return static_cast<int64_t>(unfinished_batches().size()); }

bool SqliteJobStore::transition(const std::string& id, const std::vector<std::string>& from, const std::string& to) {
  static const std::set<std::string> stamped{"in_progress", "finalizing", "completed", "failed",
                                             "expired",     "cancelling", "cancelled"};
  if (!stamped.count(to)) throw std::logic_error("bad batch status " + to);
  std::string in;
  for (size_t i = 0; i < from.size(); ++i) in += (i ? ",?" : "?");
  const std::string sql = "UPDATE batches SET status = ?, " + to + "_at = ? WHERE id = ? AND status IN (" + in + ")";
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, sql.c_str());
  s.bind(1, to).bind(2, now()).bind(3, id);
  for (size_t i = 0; i < from.size(); ++i) s.bind(static_cast<int>(4 + i), from[i]);
  s.step();
  return sqlite3_changes(db_) == 1;
}

void SqliteJobStore::set_total(const std::string& id, int64_t total) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "UPDATE batches SET total = ? WHERE id = ?");
  s.bind(1, total).bind(2, id).step();
}

void SqliteJobStore::set_errors(const std::string& id, const std::string& errors_json) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "UPDATE batches SET errors = ? WHERE id = ?");
  s.bind(1, errors_json).bind(2, id).step();
}

bool SqliteJobStore::set_output_files(const std::string& id, const std::string& output_file_id,
                                      const std::string& error_file_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "UPDATE batches SET output_file_id = ?, error_file_id = ? WHERE id = ? AND output_file_id = '' "
              "AND error_file_id = ''");
  s.bind(1, output_file_id).bind(2, error_file_id).bind(3, id).step();
  return sqlite3_changes(db_) == 1;
}

bool SqliteJobStore::record_answer(const std::string& batch_id, const AnswerRec& a) {
  std::lock_guard<std::mutex> lock(mu_);
  exec("BEGIN IMMEDIATE");
  try {
    // Only while the batch runs: once it is finalizing (its files being written), failed or
    // cancelled, a late answer would count without being in any file.
    Stmt s(db_,
           "INSERT OR IGNORE INTO answers (batch_id, line_no, custom_id, status_code, body, error) "
           "SELECT ?,?,?,?,?,? WHERE EXISTS (SELECT 1 FROM batches WHERE id = ? AND status IN "
           "('validating','in_progress'))");
    s.bind(1, batch_id).bind(2, a.line_no).bind(3, a.custom_id).bind(4, static_cast<int64_t>(a.status_code));
    s.bind(5, a.body).bind(6, a.error).bind(7, batch_id).step();
    const bool inserted = sqlite3_changes(db_) == 1;
    exec("COMMIT");
    return inserted;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::set<int64_t> SqliteJobStore::answered_lines(const std::string& batch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "SELECT line_no FROM answers WHERE batch_id = ?");
  s.bind(1, batch_id);
  std::set<int64_t> out;
  while (s.step()) out.insert(s.i64(0));
  return out;
}

std::vector<AnswerRec> SqliteJobStore::answers(const std::string& batch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt s(db_, "SELECT line_no, custom_id, status_code, body, error FROM answers WHERE batch_id = ? ORDER BY line_no");
  s.bind(1, batch_id);
  std::vector<AnswerRec> out;
  while (s.step()) out.push_back(AnswerRec{s.i64(0), s.text(1), static_cast<int>(s.i64(2)), s.text(3), s.text(4)});
  return out;
}

void SqliteJobStore::add_response(const ResponseRec& r) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt old(db_, "DELETE FROM responses WHERE created_at < ?");
  old.bind(1, now() - kResponseRetentionS).step();
  Stmt q(db_, "INSERT INTO responses (id, created_at, body, conversation) VALUES (?, ?, ?, ?)");
  q.bind(1, r.id).bind(2, r.created_at).bind(3, r.body).bind(4, r.conversation).step();
}

std::optional<ResponseRec> SqliteJobStore::response(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt q(db_, "SELECT id, created_at, body, conversation FROM responses WHERE id = ? AND created_at >= ?");
  q.bind(1, id).bind(2, now() - kResponseRetentionS);
  if (!q.step()) return std::nullopt;
  return ResponseRec{q.text(0), q.i64(1), q.text(2), q.text(3)};
}

bool SqliteJobStore::delete_response(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt q(db_, "DELETE FROM responses WHERE id = ?");
  q.bind(1, id).step();
  return sqlite3_changes(db_) > 0;
}

}  // namespace exspec::jobs
