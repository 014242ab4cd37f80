// jobs/ alone, without HTTP, torch or an engine: the job store's rules, and the batch runner
// over a real SQLite store with lines run by a stand-in for the endpoints (jobs::LineRunner).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "jobs/batch_runner.h"
#include "jobs/batches.h"
#include "jobs/open_store.h"
#include "jobs/request_error.h"
#include "tests/remove_at_exit.h"

using namespace exspec::jobs;
using nlohmann::ordered_json;

namespace {

// A fresh data directory under the temporary directory, one per test process (all of them removed
// at exit).
std::string fresh_dir(const std::string& name) {
  static const std::filesystem::path root = [] {
    static exspec::test::RemoveAtExit cleanup;
    const auto r = std::filesystem::temp_directory_path() / ("exspec-jobs-tests-" + std::to_string(::getpid()));
    cleanup.dir = r.string();
    return r;
  }();
  const auto dir = root / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

TEST_CASE("job store: a batch takes answers only while validating or in progress") {
  // Its files are written while it is finalizing: an answer that landed then (another replica's,
  // or one already queued when a failed batch aborted its lines) counted without being in a file.
  const std::string dir = fresh_dir("answers-window");
  auto js = open_job_store("", dir, "r1", 1000);
  const FileRec f = js->add_file("batch", "in.jsonl", "{}\n");
  BatchRec b;
  b.id = "batch_window", b.status = "validating", b.input_file_id = f.id, b.endpoint = "/v1/completions";
  b.completion_window = "24h";
  js->add_batch(b);
  auto answer = [&](int64_t line) { return js->record_answer(b.id, AnswerRec{line, "c" + std::to_string(line), 200, "{}", ""}); };
  CHECK(answer(1));
  REQUIRE(js->transition(b.id, {"validating"}, "in_progress"));
  CHECK(answer(2));
  CHECK_FALSE(answer(2));  // once per line
  for (const char* status : {"finalizing", "failed"}) {
    REQUIRE(js->transition(b.id, {"in_progress", "finalizing"}, status));
    CHECK_FALSE(answer(3));
    CHECK(js->batch(b.id)->completed == 2);
    CHECK(js->answered_lines(b.id) == std::set<int64_t>{1, 2});
  }
}

TEST_CASE("job store: completed and failed are the answers counted by answered_ok") {
  // One rule for the counts in both stores (answer_counts_sql; PostgreSQL's: tests/http/test_replicas.cpp)
  // and for which file a line goes to.
  const std::string dir = fresh_dir("answer-counts");
  auto js = open_job_store("", dir, "r1", 1000);
  BatchRec b;
  b.id = "batch_counts", b.status = "in_progress", b.input_file_id = js->add_file("batch", "in.jsonl", "{}\n").id;
  b.endpoint = "/v1/completions", b.completion_window = "24h";
  js->add_batch(b);
  const std::vector<AnswerRec> answers{{1, "a", 200, "{}", ""},
                                       {2, "b", 400, R"({"error":{}})", ""},
                                       {3, "c", 0, "", R"({"code":"invalid_request"})"},
                                       {4, "d", 200, "{}", R"({"code":"batch_expired"})"},
                                       {5, "e", 200, "{}", ""}};
  int64_t ok = 0;
  for (const AnswerRec& a : answers) {
    REQUIRE(js->record_answer(b.id, a));
    ok += answered_ok(a);
    CHECK(js->batch(b.id)->completed == ok);
    CHECK(js->batch(b.id)->failed == a.line_no - ok);
  }
  CHECK(ok == 2);
  CHECK_FALSE(js->record_answer(b.id, answers[1]));  // a line counts once
  bool more = false;
  CHECK(js->batches(10, "", &more).at(0).failed == 3);
}

namespace {

// Answers each line on the runner's thread through `post`, as the engine's callbacks come back:
// 200 with the line's custom_id, or refused at once for custom_id "refused". Counts how many
// lines it holds at once.
class Lines : public LineRunner {
 public:
  size_t capacity() override { return 2; }
  Started start(const BatchLine& line, bool, Post post, Done done) override {
    Started s;
    if (line.custom_id == "refused") {
      s.refused_status = 400;
      s.refused_body = R"({"error":{"message":"no","type":"invalid_request_error","param":null,"code":null}})";
      return s;
    }
    std::lock_guard<std::mutex> lock(mu_);
    held_max = std::max(held_max, ++held_);
    s.line = std::make_shared<Held>();
    post([this, done, cid = line.custom_id] {
      {
        std::lock_guard<std::mutex> lock(mu_);
        --held_;
      }
      done(200, ordered_json{{"id", "cmpl-" + cid}, {"object", "text_completion"}}.dump());
    });
    return s;
  }
  void claimed(int64_t, int64_t, double) override {}
  int held_max = 0;

 private:
  struct Held : Line {
    void abort() override {}
  };
  std::mutex mu_;
  int held_ = 0;
};

std::vector<ordered_json> lines_of(const std::string& text) {
  std::vector<ordered_json> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t eol = text.find('\n', pos);
    out.push_back(ordered_json::parse(text.substr(pos, eol - pos)));
    pos = eol + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("batch runner: every line answered once, in the output or the error file, by a LineRunner") {
  auto js = open_job_store("", fresh_dir("runner"), "r1", 1000);
  std::string input;
  for (const char* cid : {"a", "refused", "b", "c", "d"})
    input += ordered_json{{"custom_id", cid}, {"method", "POST"}, {"url", "/v1/completions"},
                          {"body", {{"prompt", "x"}}}}.dump() + "\n";
  input += "not json\n";
  const std::string file = js->add_file("batch", "in.jsonl", input).id;
  const ordered_json created = create_batch(*js, {{"input_file_id", file}, {"endpoint", "/v1/completions"},
                                                  {"completion_window", "24h"}}, 10, 86400);
  const std::string id = created["id"];
  CHECK(created["status"] == "validating");
  CHECK_THROWS_AS(create_batch(*js, {{"input_file_id", "file-none"}}, 10, 86400), RequestError);

  Lines lines;
  {
    BatchRunner runner(lines, *js, 100);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // a hang fails, never a pace
    while (js->batch(id)->status != "completed" && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const BatchRec b = *js->batch(id);
  REQUIRE(b.status == "completed");
  CHECK(b.total == 6);
  CHECK(b.completed == 4);
  CHECK(b.failed == 2);  // the refused line and the malformed one
  CHECK(lines.held_max <= 2);  // never more than its capacity at once
  std::set<std::string> ok;
  for (const ordered_json& l : lines_of(js->read_content(*js->file(b.output_file_id)))) {
    CHECK(l["response"]["status_code"] == 200);
    CHECK(l["response"]["body"]["id"] == "cmpl-" + l["custom_id"].get<std::string>());
    ok.insert(l["custom_id"]);
  }
  CHECK(ok == std::set<std::string>{"a", "b", "c", "d"});
  const auto errors = lines_of(js->read_content(*js->file(b.error_file_id)));
  REQUIRE(errors.size() == 2);
  CHECK(errors[0]["custom_id"] == "refused");
  CHECK(errors[0]["response"]["status_code"] == 400);
  CHECK(errors[1]["error"]["code"] == "invalid_request");
}

TEST_CASE("job store: kept responses are found by id until deleted or 30 days old") {
  auto js = open_job_store("", fresh_dir("responses"), "r1", 1000);
  const int64_t now = JobStore::now();
  js->add_response({"resp_old", now - kResponseRetentionS - 1, R"({"id":"resp_old"})", "[]"});
  js->add_response({"resp_new", now, R"({"id":"resp_new"})", R"([{"role":"user","content":"hi"}])"});
  CHECK_FALSE(js->response("resp_old"));  // past the retention: gone (and dropped by the next add)
  const auto r = js->response("resp_new");
  REQUIRE(r);
  CHECK(r->body == R"({"id":"resp_new"})");
  CHECK(r->conversation == R"([{"role":"user","content":"hi"}])");
  CHECK(r->created_at == now);
  CHECK(js->delete_response("resp_new"));
  CHECK_FALSE(js->delete_response("resp_new"));
  CHECK_FALSE(js->response("resp_new"));
}
