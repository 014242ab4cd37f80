// exspec batch: the Batch API's JSONL formats offline, with no server. Each input line
// {custom_id, method, url, body} runs through the same request parsing and Generation as the
// HTTP endpoints (so a line's body is exactly what /v1/completions or /v1/chat/completions
// returns); each answer is appended to the output as soon as it exists. Re-running with the same
// output skips the custom_ids already there, so an interrupted run resumes without repeats.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "app/command_line.h"
#include "app/commands.h"
#include "app/demo_pair.h"
#include "http/api_error.h"
#include "http/backend.h"
#include "http/generation.h"
#include "http/line_start.h"
#include "jobs/batch_lines.h"
#include "jobs/job_store.h"
#include "jobs/task_queue.h"

namespace exspec {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The custom_ids already answered in `path`, and the line numbers (from the output ids, for
// malformed lines that have no custom_id); a last line cut short by a kill is dropped (truncated).
std::set<std::string> answered_ids(const std::string& path, std::set<int64_t>& lines) {
  std::set<std::string> ids;
  if (!fs::exists(path)) return ids;
  std::string s = slurp(path);
  const size_t keep = s.rfind('\n') == std::string::npos ? 0 : s.rfind('\n') + 1;
  if (keep != s.size()) fs::resize_file(path, keep);
  std::istringstream in(s.substr(0, keep));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      const json j = json::parse(line);
      ids.insert(j.at("custom_id").get<std::string>());
      const std::string id = j.at("id").get<std::string>();
      lines.insert(std::stoll(id.substr(id.rfind('_') + 1)));
    } catch (const std::exception&) {
      throw std::runtime_error(path + " is not an output of exspec batch (a line without custom_id)");
    }
  }
  return ids;
}

class Progress {
 public:
  Progress(size_t total, size_t done) : total_(total), done_(done), tty_(isatty(2)), t0_(clock::now()), start_(done) {}
  void step(bool failed) {
    ++done_;
    failed_ += failed;
    const auto now = clock::now();
    if (tty_ || now - last_ >= std::chrono::seconds(2) || done_ == total_) {
      last_ = now;
      show(done_ == total_);
    }
  }
  void show(bool end) const {
    const double s = std::chrono::duration<double>(clock::now() - t0_).count();
    const double rate = s > 0.05 ? static_cast<double>(done_ - start_) / s : 0;
    char buf[200];
    if (tty_) {
      const int width = 30, fill = total_ ? static_cast<int>(width * done_ / total_) : width;
      std::snprintf(buf, sizeof buf, "\r[%s%s] %zu/%zu lines, %zu failed, %.1f lines/s ", std::string(fill, '#').c_str(),
                    std::string(width - fill, '.').c_str(), done_, total_, failed_, rate);
      std::cerr << buf << (end ? "\n" : "") << std::flush;
    } else {
      std::snprintf(buf, sizeof buf, "exspec batch: %zu/%zu lines answered, %zu failed, %.1f lines/s", done_, total_,
                    failed_, rate);
      std::cerr << buf << std::endl;
    }
  }

 private:
  using clock = std::chrono::steady_clock;
  size_t total_, done_, failed_ = 0;
  bool tty_;
  clock::time_point t0_, last_{};
  size_t start_;
};

// What --help says before the flags.
const char* const kUsage = "--input requests.jsonl --output results.jsonl [--config FILE] [--model DIR] [flags]";
const char* const kAbout =
    "The OpenAI Batch API's JSONL formats, offline: each input line {custom_id, method: \"POST\",\n"
    "url: /v1/completions | /v1/chat/completions, body} gets one output line {id, custom_id,\n"
    "response: {status_code, request_id, body}, error}, appended as soon as it is answered.\n"
    "Re-running with the same --output skips the custom_ids already there (resume). Progress\n"
    "goes to stderr (a bar on a terminal, plain lines otherwise). Without --model: the trained demo\n"
    "pair in demo/ (as exspec serve). See docs/batch-jobs.md.\n";

}  // namespace

int cmd_batch(int argc, char** argv, int first) {
  const auto cl = read_command_line(Command::Batch, argc, argv, first, kUsage, kAbout);
  if (!cl) return 0;
  Settings c = cl->settings();
  const std::string input = cl->text("input"), output = cl->text("output");
  if (c.model.empty()) {
    use_demo_pair(c, "batch");
  }

  const jobs::ParsedBatch p = jobs::parse_batch_file(slurp(input), "", SIZE_MAX);
  if (!p.fatal.is_null()) {
    for (const auto& e : p.fatal["data"])
      std::cerr << "exspec batch: " << input << (e["line"].is_null() ? "" : ":" + e["line"].dump()) << ": "
                << e["message"].get<std::string>() << "\n";
    return 1;
  }
  std::set<int64_t> done_lines;
  const std::set<std::string> done = answered_ids(output, done_lines);
  std::ofstream out(output, std::ios::app | std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + output);
  const std::string batch_id = "batch_offline";
  size_t already = 0;
  std::vector<jobs::AnswerRec> invalid;
  for (const auto& r : p.invalid) {
    if (r.custom_id.empty() ? done_lines.count(r.line_no) > 0 : done.count(r.custom_id) > 0) ++already;
    else invalid.push_back(r);
  }
  std::deque<jobs::BatchLine> todo;
  for (const auto& l : p.lines) {
    if (done.count(l.custom_id)) ++already;
    else todo.push_back(l);
  }
  Progress progress(static_cast<size_t>(p.total()), already);
  auto write = [&](const jobs::AnswerRec& r) {
    out << jobs::output_line(batch_id, r) << "\n";
    out.flush();  // a killed run keeps every line written so far
    progress.step(!jobs::answered_ok(r));
  };
  for (const auto& r : invalid) write(r);
  if (already) std::cerr << "exspec batch: resuming: " << already << " lines already in " << output << "\n";

  // The models, as exspec serve loads them.
  const std::unique_ptr<http::Backend> backend = http::load_backend(c, "exspec batch");
  Engine* engine = backend->engine.get();
  const http::ModelFacts& facts = backend->facts;
  const std::string& served = backend->served_name;

  auto q = std::make_shared<jobs::TaskQueue>();  // the engine's callbacks, run on this thread
  const size_t cap = c.limits.batch_in_flight > 0 ? c.limits.batch_in_flight
                                                 : static_cast<size_t>(2 * live_sequences(engine->options().decoding));
  std::map<int64_t, std::pair<std::shared_ptr<http::Generation>, std::shared_ptr<http::GenerationOutput>>> inflight;
  std::vector<int64_t> finished;  // released after the Generation's own call returns
  bool overloaded = false;
  while (!todo.empty() || !inflight.empty()) {
    for (int64_t n : finished) inflight.erase(n);
    finished.clear();
    overloaded = false;
    while (!todo.empty() && inflight.size() < std::max<size_t>(1, cap) && !overloaded) {
      const jobs::BatchLine line = todo.front();
      auto answer = [&write, &finished, line](int status, std::string body) {
        write(jobs::AnswerRec{line.line_no, line.custom_id, status, std::move(body), ""});
        finished.push_back(line.line_no);
      };
      http::GenerationEnv env;
      env.engine = engine;
      env.tokenizer = facts.tokenizer;
      env.model_name = served;
      env.model_eos = engine->info().eos_ids;
      env.post = [q](std::function<void()> f) { q->push(std::move(f)); };
      env.priority = 0;
      auto lo = http::line_output(answer);  // appended to the output by this thread
      http::LineStart s = http::start_line(line, line.url == "/v1/chat/completions", facts, std::move(env), lo);
      if (s.busy) {
        overloaded = true;  // retry when something finishes
        continue;
      }
      if (s.refused) answer(s.refused->status(), s.refused->to_json().dump());
      else inflight[line.line_no] = {std::move(s.gen), lo};
      todo.pop_front();
    }
    for (auto& t : q->wait(std::chrono::milliseconds(100)).tasks) t();
  }
  engine->shutdown(true);
  std::cerr << "exspec batch: done: " << p.total() << " lines, output in " << output << "\n";
  return 0;
}

}  // namespace exspec
