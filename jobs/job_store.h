// Durable state of the Files and Batches APIs (and the Responses API's stored responses), behind one interface with two implementations:
// SQLite in a data directory (jobs/sqlite_job_store.h, the embedded default: one process) and
// PostgreSQL (jobs/pg_job_store.h: every replica behind a load balancer shares it). Every answered
// batch line is committed under UNIQUE(batch_id, line_no), so a line is answered exactly once
// whatever kills or races happen. Torch-free.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace exspec::jobs {

struct FileRec {
  std::string id, purpose, filename;
  std::string path;  // SQLite: where the content is (DIR/files/ID); PostgreSQL: empty (content in the database)
  int64_t bytes = 0, created_at = 0;
};

// A file whose record exists but whose content is gone (removed from the data directory by
// hand). what() names the file id only, for clients; where() is the path looked at, for the log.
class ContentMissing : public std::runtime_error {
 public:
  ContentMissing(const std::string& id, std::string where)
      : std::runtime_error("the content of file " + id + " is missing from the server's storage"),
        where_(std::move(where)) {}
  const std::string& where() const { return where_; }

 private:
  std::string where_;
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

// A response of the Responses API kept with store true: its object as answered, and the
// conversation it ends (chat messages: its input and its answer), which a later request's
// previous_response_id continues. Kept kResponseRetentionS (30 days, as OpenAI keeps them).
struct ResponseRec {
  std::string id;
  int64_t created_at = 0;
  std::string body;          // JSON text: the response object
  std::string conversation;  // JSON text: chat messages
};
constexpr int64_t kResponseRetentionS = 30 * 24 * 3600;

// Work distribution for a store that several replicas share: the lines of a batch are rows that
// a replica claims with a lease (SELECT ... FOR UPDATE SKIP LOCKED), renews while it runs them,
// and that vanish when their answer commits. A replica that dies stops renewing; its lines are
// claimed again by the others once the lease has expired. All lease times are the database's.
class LineLeases {
 public:
  struct Claimed {
    int64_t line_no = 0;
    bool reclaimed = false;  // someone held it before and its lease expired
  };
  virtual ~LineLeases() = default;
  // validating -> in_progress with the lines to run and the batch's total, in one transaction, so
  // that no replica ever sees an in_progress batch without its lines. false: another replica did it.
  virtual bool start_lines(const std::string& batch_id, const std::vector<int64_t>& line_nos, int64_t total) = 0;
  // At most n unanswered lines whose lease has expired (or that nobody held), now leased to us.
  virtual std::vector<Claimed> claim(const std::string& batch_id, size_t n) = 0;
  // Extends our leases on these lines (the ones still running here).
  virtual void renew(const std::string& batch_id, const std::vector<int64_t>& line_nos) = 0;
  // Gives lines back at once (shutdown, a line cut short): another replica may claim them now.
  virtual void release(const std::string& batch_id, const std::vector<int64_t>& line_nos) = 0;
  virtual void release_all() = 0;
  virtual int64_t open_lines(const std::string& batch_id) = 0;  // not yet answered
  virtual int64_t lease_ms() const = 0;
};

class JobStore {
 public:
  virtual ~JobStore() = default;

  static int64_t now();

  // Problems found at start-up (one line each), printed as warnings.
  virtual std::vector<std::string> audit() { return {}; }
  // Where the state lives, for messages.
  virtual std::string where() const = 0;

  // Files. The content is durable before the row exists, so a row always has its content.
  virtual FileRec add_file(const std::string& purpose, const std::string& filename, const std::string& content) = 0;
  virtual std::optional<FileRec> file(const std::string& id) = 0;
  virtual std::vector<FileRec> files() = 0;
  virtual bool delete_file(const std::string& id) = 0;
  virtual std::string read_content(const FileRec& f) = 0;

  // Batches.
  virtual void add_batch(const BatchRec& b) = 0;
  virtual std::optional<BatchRec> batch(const std::string& id) = 0;
  // Newest first; `after` is the id of the last batch of the previous page.
  virtual std::vector<BatchRec> batches(int64_t limit, const std::string& after, bool* has_more) = 0;
  // validating, in_progress, finalizing, cancelling; oldest first.
  virtual std::vector<std::string> unfinished_batches() = 0;
  virtual int64_t active_batch_count() = 0;
  // Moves a batch to `to` (stamping its timestamp) only if its status is one of `from`.
  virtual bool transition(const std::string& id, const std::vector<std::string>& from, const std::string& to) = 0;
  virtual void set_total(const std::string& id, int64_t total) = 0;
  virtual void set_errors(const std::string& id, const std::string& errors_json) = 0;
  // Records the output files only if none are recorded yet; false: another writer was first
  // (the caller deletes the files it made).
  virtual bool set_output_files(const std::string& id, const std::string& output_file_id,
                                const std::string& error_file_id) = 0;

  // Answers. Inserts the line and moves the batch's count in one transaction; false (and nothing
  // changes) when the line was already answered or the batch is no longer validating or
  // in_progress (its files are being written or it has ended).
  virtual bool record_answer(const std::string& batch_id, const AnswerRec& a) = 0;
  virtual std::set<int64_t> answered_lines(const std::string& batch_id) = 0;
  virtual std::vector<AnswerRec> answers(const std::string& batch_id) = 0;  // in line order

  // Stored responses. add_response also drops those older than kResponseRetentionS.
  virtual void add_response(const ResponseRec& r) = 0;
  virtual std::optional<ResponseRec> response(const std::string& id) = 0;
  virtual bool delete_response(const std::string& id) = 0;

  // Shared stores hand lines out with leases; a store of one process returns null and the batch
  // runner runs every unanswered line itself.
  virtual LineLeases* leases() { return nullptr; }
};

// A line answered well: the endpoint's 200 and no error. The batch's completed and failed counts
// are its answers counted by this rule, derived by both stores from their answers table with
// answer_counts_sql (never kept as counters beside it), and the runner sorts the output and error
// files by it.
inline bool answered_ok(const AnswerRec& a) { return a.status_code == 200 && a.error.empty(); }

// Two SELECT columns, completed then failed, for the batch row aliased `b`: answered_ok in SQL,
// over the answers table `answers` (columns batch_id, status_code, error). SQLite and PostgreSQL.
std::string answer_counts_sql(const std::string& answers);

}  // namespace exspec::jobs
