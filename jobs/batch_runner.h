// Runs the batches in the job store through a LineRunner: the server's (http/line_start.h) runs
// each line through the same request parsing and Generation as /v1/completions and
// /v1/chat/completions, so a line's body is exactly what the endpoint returns, at priority 0
// (interactive requests use 1), with a bounded number of lines in flight (its capacity:
// limits.batch_in_flight, default 2 * the engine window: enough to keep the window full where
// ExSpec's grouping pays, few enough that interactive requests are never queued behind a whole
// batch).
//
// One thread does all of it: it validates, submits lines, records each answer in the store
// (committed before it counts), and writes the output and error files at finalizing. On start,
// unfinished batches resume: lines already answered are skipped, so every line is answered
// exactly once across kills and restarts.
// A line cut short by shutdown (503) is not recorded: it runs again after the restart.
//
// With a shared store (PostgreSQL: store.leases() is not null) several replicas run the same
// batches: each claims lines in chunks of its free capacity, with a lease it renews while the
// lines run here; lines of a replica that died are claimed again by the others once the lease
// has expired; the batch moves on when no line is left to answer, whoever answered them. The
// answer's uniqueness in the store makes each line answered once, whatever races.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "jobs/batch_lines.h"
#include "jobs/job_store.h"
#include "jobs/task_queue.h"

namespace exspec::jobs {

// What runs a batch line: the endpoint the line names. Called on the runner thread only.
class LineRunner {
 public:
  class Line {  // a line started
   public:
    virtual ~Line() = default;
    virtual void abort() = 0;  // the batch was cancelled or expired: its answer will not count
  };
  struct Started {
    std::shared_ptr<Line> line;  // started: `done` runs once, through `post`
    int refused_status = 0;      // not started: what the endpoint answered at once (status, JSON body)
    std::string refused_body;
    bool busy = false;  // not started: the engine is full, retry later
  };
  using Post = std::function<void(std::function<void()>)>;
  using Done = std::function<void(int status, std::string body)>;

  virtual ~LineRunner() = default;
  // How many lines may run at once; 0 while none may start (loading, draining, failed).
  virtual size_t capacity() = 0;
  virtual Started start(const BatchLine& line, bool chat, Post post, Done done) = 0;
  // A shared store handed out n lines (`reclaimed` of them after another's lease ran out).
  virtual void claimed(int64_t n, int64_t reclaimed, double seconds) = 0;
};

class BatchRunner {
 public:
  // max_lines: the most lines an input file may hold (limits.max_batch_lines).
  BatchRunner(LineRunner& lines, JobStore& store, size_t max_lines);
  ~BatchRunner();
  void wake();  // something changed (a new batch, a cancel): look again now
  void stop();  // after the engine has shut down (its last callbacks may still post here)

 private:
  struct Running {
    std::string id, endpoint;
    bool loaded = false;
    std::deque<BatchLine> pending;
    std::map<int64_t, BatchLine> lines;  // shared store: the input file's lines, to run what we claim
    std::map<int64_t, std::shared_ptr<LineRunner::Line>> inflight;
  };

  void loop();
  void tick();
  void validate(Running& r, const BatchRec& b);
  void load(Running& r, const BatchRec& b);
  // The input file's content; nullopt after failing the batch with the reason (file deleted, or
  // its content missing from the data directory).
  std::optional<std::string> input_of(const BatchRec& b);
  // Ends a batch that cannot go on as failed with one error saying why; what was answered is
  // still written to the output and error files.
  void fail_batch(const BatchRec& b, const std::string& code, const std::string& message);
  void write_output_files(const BatchRec& b);
  bool fill(Running& r, size_t cap);  // false: the engine refused (overloaded): retry later
  void answered(const std::string& batch_id, int64_t line_no, const AnswerRec& a, bool record);
  void finalize(const BatchRec& b, const std::string& to);
  // Past its completion window: what runs is dropped, the lines not answered are answered
  // batch_expired, and the batch ends "expired" with what was answered before.
  void expire(Running& r, const BatchRec& b);
  // What a finalizing batch ends as: failed (errors set), expired (a batch_expired line) or completed.
  std::string final_status(const BatchRec& b);
  size_t in_flight() const;
  // Shared store: claims lines up to the free capacity into r.pending.
  void claim_more(Running& r, size_t cap);
  void renew_leases();  // extends the leases of every line pending or running here
  // The lines pending or running here (whose leases we hold).
  static std::vector<int64_t> held(const Running& r);

  LineRunner& lines_;
  JobStore& store_;
  size_t max_lines_;
  std::shared_ptr<TaskQueue> q_;  // tasks for the runner thread; shared with the engine's callbacks
  std::map<std::string, Running> running_;  // only touched on the runner thread
  std::chrono::steady_clock::time_point last_renew_{};
  std::thread thread_;
};

}  // namespace exspec::jobs
