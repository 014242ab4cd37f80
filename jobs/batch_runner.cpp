#include "jobs/batch_runner.h"

#include <algorithm>
#include <iostream>


namespace exspec::jobs {
using nlohmann::ordered_json;

BatchRunner::BatchRunner(LineRunner& lines, JobStore& store, size_t max_lines)
    : lines_(lines), store_(store), max_lines_(max_lines), q_(std::make_shared<TaskQueue>()), thread_([this] { loop(); }) {
  q_->wake();  // look at the store at once
}

BatchRunner::~BatchRunner() { stop(); }

void BatchRunner::wake() { q_->wake(); }

void BatchRunner::stop() {
  if (!thread_.joinable()) return;  // stopped already
  q_->stop();
  thread_.join();
  running_.clear();  // the lines: with the engine stopped they cancel nothing
  // What we still held goes back at once, not after the lease: the other replicas go on now.
  if (LineLeases* l = store_.leases()) {
    try {
      l->release_all();
    } catch (const std::exception& e) {
      std::cerr << "exspec serve: batch runner: releasing leases: " << e.what() << std::endl;
    }
  }
}

void BatchRunner::loop() {
  auto last_tick = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  while (true) {
    TaskQueue::Taken taken = q_->wait(std::chrono::milliseconds(200));
    if (taken.stopped) return;  // the engine is down: its last callbacks have nothing to do
    const bool woke = taken.woken;
    for (auto& t : taken.tasks) {
      try {
        t();
      } catch (const std::exception& e) {
        std::cerr << "exspec serve: batch runner: " << e.what() << std::endl;
      }
    }
    // Look at the store when told to, and every 200 ms (retries after an overloaded engine).
    const auto now = std::chrono::steady_clock::now();
    if (woke || now - last_tick >= std::chrono::milliseconds(200)) {
      last_tick = now;
      try {
        tick();
      } catch (const std::exception& e) {
        std::cerr << "exspec serve: batch runner: " << e.what() << std::endl;
      }
    }
  }
}

size_t BatchRunner::in_flight() const {
  size_t n = 0;
  for (const auto& [id, r] : running_) n += r.inflight.size();
  return n;
}

void BatchRunner::tick() {
  // Leases are renewed while draining too: the lines still running here are ours until answered.
  LineLeases* leases = store_.leases();
  if (leases) renew_leases();
  // Nothing new is started while loading, draining or failed; answers still arrive as tasks.
  const size_t cap = lines_.capacity();
  if (cap == 0) return;
  const std::vector<std::string> ids = store_.unfinished_batches();
  bool engine_full = false;
  for (const std::string& id : ids) {
    Running& r = running_[id];
    r.id = id;
    auto b = store_.batch(id);
    if (!b) continue;
    r.endpoint = b->endpoint;
    if (b->status == "validating") {
      validate(r, *b);
      b = store_.batch(id);
    }
    if (b->status == "in_progress" && b->expires_at > 0 && JobStore::now() >= b->expires_at) {
      expire(r, *b);
      b = store_.batch(id);
    }
    if (b->status == "in_progress" && !r.loaded) {
      load(r, *b);
      b = store_.batch(id);
    }
    if (b->status == "in_progress") {
      if (leases && !engine_full) claim_more(r, cap);
      if (!engine_full) engine_full = !fill(r, cap);
      b = store_.batch(id);  // fill may have answered lines (invalid bodies)
      // Every line must end in the output or the error file before the batch completes.
      const int64_t missing = b->total - b->completed - b->failed;
      if (leases) {
        // Lines left in the store are running elsewhere (or wait for a dead replica's lease).
        if (r.pending.empty() && r.inflight.empty() && leases->open_lines(id) == 0)
          store_.transition(id, {"in_progress"}, "finalizing");
        b = store_.batch(id);
      } else if (r.pending.empty() && r.inflight.empty() && missing > 0)
        fail_batch(*b, "lines_unanswered", std::to_string(missing) + " lines of the input file were never answered");
      else if (r.pending.empty() && r.inflight.empty() && store_.transition(id, {"in_progress"}, "finalizing"))
        b = store_.batch(id);
    }
    if (b->status == "finalizing") {
      finalize(*b, final_status(*b));
    } else if (b->status == "cancelling") {
      for (auto& [line, g] : r.inflight) g->abort();  // the engine drops them at its next step
      if (leases) leases->release(id, held(r));
      r.inflight.clear();
      r.pending.clear();
      finalize(*b, "cancelled");
    }
  }
  // Batches that failed validation or finished elsewhere (another replica finalized a cancel, a
  // failure, or lines we ran again after a lease ran out) need no state here, and what still
  // runs for them would count for nothing: it is cancelled.
  for (auto it = running_.begin(); it != running_.end();) {
    if (std::find(ids.begin(), ids.end(), it->first) != ids.end()) {
      ++it;
      continue;
    }
    for (auto& [line, g] : it->second.inflight) g->abort();
    it = running_.erase(it);
  }
}

void BatchRunner::validate(Running&, const BatchRec& b) {
  auto fail = [&](const ordered_json& errors) {
    store_.set_errors(b.id, errors.dump());
    store_.transition(b.id, {"validating"}, "failed");
  };
  const std::optional<std::string> content = input_of(b);
  if (!content) return;
  const ParsedBatch p = parse_batch_file(*content, b.endpoint, max_lines_);
  if (!p.fatal.is_null()) return fail(p.fatal);
  // Malformed lines are answered now (error file); recording is idempotent if validation reruns.
  for (const auto& a : p.invalid) store_.record_answer(b.id, a);
  if (LineLeases* leases = store_.leases()) {
    // The lines to run and in_progress in one transaction: whichever replica validates first.
    std::vector<int64_t> nos;
    for (const auto& line : p.lines) nos.push_back(line.line_no);
    leases->start_lines(b.id, nos, p.total());
    return;
  }
  store_.set_total(b.id, p.total());
  store_.transition(b.id, {"validating"}, "in_progress");
}

void BatchRunner::load(Running& r, const BatchRec& b) {
  const std::optional<std::string> content = input_of(b);
  if (!content) return;  // failed: the lines not yet answered cannot run
  const ParsedBatch p = parse_batch_file(*content, b.endpoint, SIZE_MAX);
  if (store_.leases()) {  // what runs here is what we claim
    for (const auto& line : p.lines) r.lines[line.line_no] = line;
    r.loaded = true;
    return;
  }
  const std::set<int64_t> done = store_.answered_lines(b.id);
  for (const auto& line : p.lines)
    if (!done.count(line.line_no) && !r.inflight.count(line.line_no)) r.pending.push_back(line);
  r.loaded = true;
}

std::optional<std::string> BatchRunner::input_of(const BatchRec& b) {
  const int64_t open = b.status == "validating" ? 0 : b.total - b.completed - b.failed;
  const std::string lost = open > 0 ? "; " + std::to_string(open) + " lines were not answered" : "";
  auto f = store_.file(b.input_file_id);
  if (!f) {
    fail_batch(b, "file_not_found", "the input file " + b.input_file_id + " was deleted" + lost);
    return std::nullopt;
  }
  std::string why;
  try {
    return store_.read_content(*f);
  } catch (const ContentMissing& e) {  // the id for the batch's errors, the path for the log
    std::cerr << "exspec serve: batch " << b.id << ": " << e.what() << " (looked for " << e.where() << ")" << std::endl;
    why = e.what();
  } catch (const std::exception& e) {
    std::cerr << "exspec serve: batch " << b.id << ": " << e.what() << std::endl;
    why = e.what();
  }
  fail_batch(b, "file_content_missing",
             why + lost + " (restore the file into the data directory's files/ and create the batch again)");
  return std::nullopt;
}

void BatchRunner::fail_batch(const BatchRec& b, const std::string& code, const std::string& message) {
  store_.set_errors(b.id, ordered_json{{"object", "list"},
                                       {"data", {{{"code", code}, {"message", message}, {"param", "input_file_id"},
                                                  {"line", nullptr}}}}}.dump());
  // Through finalizing, as a batch that completes: the store takes no answer from then on, so the
  // files written next hold every answer the batch counts (another replica's late answer used to
  // land between the files and "failed"). A restart in between ends it failed too: final_status.
  if (store_.transition(b.id, {"validating", "in_progress"}, "finalizing")) {
    write_output_files(b);
    store_.transition(b.id, {"finalizing"}, "failed");
  }
  if (auto it = running_.find(b.id); it != running_.end()) {
    for (auto& [line, g] : it->second.inflight) g->abort();
    it->second.inflight.clear();
    it->second.pending.clear();
    it->second.loaded = true;  // nothing more to load: the batch is over
  }
}

void BatchRunner::write_output_files(const BatchRec& b) {
  if (!b.output_file_id.empty() || !b.error_file_id.empty()) return;  // written before a restart
  std::string ok, bad;
  for (const auto& a : store_.answers(b.id))
    (answered_ok(a) ? ok : bad) += output_line(b.id, a) + "\n";
  std::string out_id, err_id;
  if (!ok.empty()) out_id = store_.add_file("batch_output", b.id + "_output.jsonl", ok).id;
  if (!bad.empty()) err_id = store_.add_file("batch_output", b.id + "_error.jsonl", bad).id;
  if (store_.set_output_files(b.id, out_id, err_id)) return;
  // Another replica finalized the same batch first (the same answers): keep its files only.
  if (!out_id.empty()) store_.delete_file(out_id);
  if (!err_id.empty()) store_.delete_file(err_id);
}

bool BatchRunner::fill(Running& r, size_t cap) {
  const bool chat = r.endpoint == "/v1/chat/completions";
  while (!r.pending.empty() && in_flight() < cap) {
    const BatchLine& line = r.pending.front();
    // Runs on this thread: the runner posts the line's callbacks here.
    auto done = [this, batch = r.id, no = line.line_no, cid = line.custom_id](int status, std::string body) {
      // 503: the server is shutting down and cut the line short; it runs again after the restart.
      answered(batch, no, AnswerRec{no, cid, status, std::move(body), ""}, status != 503);
    };
    LineRunner::Started s =
        lines_.start(line, chat, [q = q_](std::function<void()> f) { q->push(std::move(f)); }, std::move(done));
    if (s.busy) return false;  // the line stays pending
    if (s.line) r.inflight[line.line_no] = std::move(s.line);
    else store_.record_answer(r.id, AnswerRec{line.line_no, line.custom_id, s.refused_status, s.refused_body, ""});
    r.pending.pop_front();
  }
  return true;
}

void BatchRunner::answered(const std::string& batch_id, int64_t line_no, const AnswerRec& a, bool record) {
  bool kept = !record;  // true: the answer is committed, or there was none to commit
  if (record) {
    try {
      store_.record_answer(batch_id, a);  // committed before the count moves (same transaction)
      kept = true;
    } catch (const std::exception& e) {  // the store failed (disk, database down): run the line again
      std::cerr << "exspec serve: batch " << batch_id << " line " << line_no << ": answer not recorded: " << e.what()
                << std::endl;
    }
  }
  const bool again = !record || !kept;
  // The line is inside its own call: release it after, from a later task.
  q_->push([this, batch_id, line_no, again] {
    auto it = running_.find(batch_id);
    if (it == running_.end()) return;
    it->second.inflight.erase(line_no);  // no longer renewed: its lease runs out if the release fails
    if (again && store_.leases()) {
      store_.leases()->release(batch_id, {line_no});  // another replica (or we, later) runs it again
    } else if (again && lines_.capacity() > 0) {
      // Not expected while serving (503 means shutting down), but never lose the line.
      // Its body is gone here: reload the batch's pending lines from the file.
      it->second.loaded = false;
      it->second.pending.clear();
    }
  });
  q_->wake();
}

std::vector<int64_t> BatchRunner::held(const Running& r) {
  std::vector<int64_t> out;
  for (const auto& line : r.pending) out.push_back(line.line_no);
  for (const auto& [line_no, g] : r.inflight) out.push_back(line_no);
  return out;
}

void BatchRunner::claim_more(Running& r, size_t cap) {
  const size_t busy = in_flight() + r.pending.size();
  if (busy >= cap) return;
  const auto t0 = std::chrono::steady_clock::now();
  const auto claimed = store_.leases()->claim(r.id, cap - busy);
  int64_t reclaimed = 0;
  for (const auto& c : claimed) {
    auto it = r.lines.find(c.line_no);
    reclaimed += c.reclaimed;
    if (it != r.lines.end()) {
      r.pending.push_back(it->second);
    } else {  // not a well-formed line of the file we read: cannot happen unless the store was edited
      store_.record_answer(r.id, AnswerRec{c.line_no, "", 0, "", ordered_json{{"code", "line_not_found"},
                           {"message", "line " + std::to_string(c.line_no) + " is not in the input file"}}.dump()});
    }
  }
  if (!claimed.empty())
    lines_.claimed(static_cast<int64_t>(claimed.size()), reclaimed,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

void BatchRunner::renew_leases() {
  LineLeases* leases = store_.leases();
  const auto now = std::chrono::steady_clock::now();
  // A third of the lease: two renewals may fail (a slow database) before a line is lost to others.
  if (now - last_renew_ < std::chrono::milliseconds(leases->lease_ms() / 3)) return;
  last_renew_ = now;
  for (const auto& [id, r] : running_) leases->renew(id, held(r));
}

void BatchRunner::expire(Running& r, const BatchRec& b) {
  for (auto& [line, g] : r.inflight) g->abort();  // the engine drops them at its next step
  if (LineLeases* leases = store_.leases()) leases->release(b.id, held(r));
  r.inflight.clear();
  r.pending.clear();
  r.loaded = true;
  const std::optional<std::string> content = input_of(b);
  if (!content) return;  // failed instead: the lines cannot be named
  // Every line not answered by now is answered "batch_expired" (OpenAI's error file); an answer
  // of another replica that lands first wins, one that comes later finds the line answered.
  const std::set<int64_t> done = store_.answered_lines(b.id);
  const std::string error = ordered_json{{"code", "batch_expired"},
      {"message", "This request could not be executed before the completion window expired."}}.dump();
  int64_t expired = 0;
  for (const auto& line : parse_batch_file(*content, b.endpoint, SIZE_MAX).lines)
    if (!done.count(line.line_no)) expired += store_.record_answer(b.id, AnswerRec{line.line_no, line.custom_id, 0, "", error});
  std::cerr << "exspec serve: batch " << b.id << ": completion window " << b.completion_window << " passed; "
            << expired << " lines not answered go to the error file as batch_expired" << std::endl;
  // Every line is answered now: the batch moves to finalizing as one that completes.
}

std::string BatchRunner::final_status(const BatchRec& b) {
  if (b.errors != "null" && !b.errors.empty()) return "failed";  // fail_batch, cut short by a restart
  for (const AnswerRec& a : store_.answers(b.id))
    if (a.status_code == 0 && a.error.find("\"batch_expired\"") != std::string::npos) return "expired";
  return "completed";
}

void BatchRunner::finalize(const BatchRec& b, const std::string& to) {
  write_output_files(b);
  store_.transition(b.id, {"finalizing", "cancelling"}, to);
  running_.erase(b.id);
}

}  // namespace exspec::jobs
