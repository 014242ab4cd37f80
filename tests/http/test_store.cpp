// The data directory under damage (issue 19): a damaged exspec.db refuses to start with a message
// that names the file and what to do; a deleted or emptied one starts empty but warns about the
// files it does not know. And JSON values the parser rejects (numbers beyond double, content part
// types that are not strings) inside batch lines end in the error file, not in a stuck batch.
#include <csignal>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/http/batch_support.h"
#include "tests/http/support.h"

using namespace exspec::httptest;
namespace fs = std::filesystem;

namespace {

// A data directory with two uploaded files, left by a clean stop (the WAL checkpointed into the db).
std::vector<std::string> prepared_dir(const std::string& dir) {
  ServerProcess s({"--data-dir", dir});
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) ids.push_back(upload(s.port(), completion_lines(3, 4).jsonl)["id"]);
  s.signal(SIGTERM);
  REQUIRE(s.wait_exit(20) == 0);
  return ids;
}

std::string serve_until_exit(const std::string& dir, int* status) {
  return run_capture("timeout 30 " + std::string(EXSPEC_BIN) + " serve --model " + models().target +
                         " --port 0 --threads 1 --data-dir " + dir + " 2>&1",
                     status);
}

}  // namespace

TEST_CASE("store: a damaged exspec.db refuses to start and says which file and what to do") {
  const std::string dir = data_dir("damaged");
  prepared_dir(dir);
  const std::string db = dir + "/exspec.db";
  REQUIRE(fs::file_size(db) >= 3 * 4096);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    const std::string junk(64, '\xff');
    for (size_t page = 1; (page + 1) * 4096 <= fs::file_size(db); ++page) {  // every b-tree page but the first
      f.seekp(static_cast<std::streamoff>(page * 4096));
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
  }
  int st = 0;
  const std::string out = serve_until_exit(dir, &st);
  INFO(out);
  CHECK(st == 1);  // not 124: it did not start serving
  CHECK(out.find(db) != std::string::npos);
  CHECK(out.find("damaged") != std::string::npos);
  CHECK(out.find("backup") != std::string::npos);
  CHECK(out.find("listening") == std::string::npos);
}

TEST_CASE("store: start-up warns about files the store does not know (exspec.db deleted or emptied) and about lost content") {
  for (const bool remove : {true, false}) {
    INFO((remove ? "deleted" : "emptied"));
    const std::string dir = data_dir(remove ? "db-deleted" : "db-emptied");
    const auto ids = prepared_dir(dir);
    if (remove) fs::remove(dir + "/exspec.db");
    else std::ofstream(dir + "/exspec.db", std::ios::trunc);
    ServerProcess s({"--data-dir", dir});
    const std::string log = s.log();
    INFO(log);
    CHECK(log.find("warning: 2 files in " + dir + "/files") != std::string::npos);
    for (const auto& id : ids) CHECK(log.find(id) != std::string::npos);
    CHECK(request(s.port(), "GET", "/v1/files").json_body()["data"].empty());
    CHECK(request(s.port(), "GET", "/v1/files/" + ids[0] + "/content").status == 404);
  }
  // The other way round: the store knows a file whose content is gone.
  const std::string dir = data_dir("content-gone");
  const auto ids = prepared_dir(dir);
  fs::remove(dir + "/files/" + ids[1]);
  ServerProcess s({"--data-dir", dir});
  INFO(s.log());
  CHECK(s.log().find("warning: 1 files of the store have no content in " + dir + "/files (" + ids[1] + ")") !=
        std::string::npos);
}

TEST_CASE("store: JSON values beyond what the parser takes end as invalid batch lines, not stuck batches") {
  ServerProcess s({"--data-dir", data_dir("json-values")});
  const int port = s.port();
  std::string jsonl = completion_lines(1, 4).jsonl;
  jsonl += R"({"custom_id":"huge","method":"POST","url":"/v1/completions","body":{"model":"target","prompt":"x","max_tokens":1e999}})" "\n";
  jsonl += R"({"custom_id":"deep","method":"POST","url":"/v1/completions","body":{"model":"target","prompt":[1,2,-1e400]}})" "\n";
  const json b = wait_final(port, create_batch(port, upload(port, jsonl)["id"])["id"], 60);
  INFO(b.dump());
  REQUIRE(b["status"] == "completed");
  CHECK(b["request_counts"] == json{{"total", 3}, {"completed", 1}, {"failed", 2}});
  const auto errs = download(port, b["error_file_id"]);
  REQUIRE(errs.size() == 2);
  for (const auto& e : errs) {
    INFO(e.dump());
    CHECK(e["error"]["code"] == "invalid_request");
    const std::string m = e["error"]["message"];
    CHECK(m.find("not valid JSON") != std::string::npos);
    CHECK((m.find("body.max_tokens") != std::string::npos || m.find("body.prompt[2]") != std::string::npos));
  }

  const std::string chat = R"({"custom_id":"part","method":"POST","url":"/v1/chat/completions","body":{"model":"target","messages":[{"role":"user","content":[{"type":1,"text":"x"}]}]}})" "\n";
  const json c = wait_final(port, create_batch(port, upload(port, chat)["id"], "/v1/chat/completions")["id"], 60);
  INFO(c.dump());
  REQUIRE(c["status"] == "completed");
  CHECK(c["request_counts"] == json{{"total", 1}, {"completed", 0}, {"failed", 1}});
  const auto cerr = download(port, c["error_file_id"]);
  REQUIRE(cerr.size() == 1);
  CHECK(cerr[0]["response"]["status_code"] == 400);
  CHECK(cerr[0]["response"]["body"]["error"]["param"] == "messages[0].content");

  HttpResult bad = request(port, "POST", "/v1/batches", R"({"input_file_id":"x","endpoint":"/v1/completions","completion_window":"24h","metadata":{"n":1e999}})",
                           {{"Content-Type", "application/json"}});
  CHECK(bad.status == 400);
  CHECK(bad.json_body()["error"]["param"] == "metadata.n");
}
