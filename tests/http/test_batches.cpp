// The Files and Batches APIs against real `exspec serve --data-dir` processes: upload, create,
// poll, download, every answer compared with the float64 greedy oracle; invalid lines and
// duplicate custom_ids; cancel; and a kill -9 in the middle of a batch followed by a restart on
// the same data directory, after which every line is answered exactly once.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/http/batch_support.h"
#include "tests/http/support.h"

using namespace exspec::httptest;

TEST_CASE("batches: upload then run then download and every answer equals the float64 oracle") {
  ServerProcess s({"--data-dir", data_dir("basic")});
  const int port = s.port();
  const Lines l = completion_lines(12, 20);
  const json f = upload(port, l.jsonl);
  CHECK(f["object"] == "file");
  CHECK(f["purpose"] == "batch");
  CHECK(f["bytes"] == l.jsonl.size());
  CHECK(f["filename"] == "requests.jsonl");
  const std::string fid = f["id"];
  CHECK(request(port, "GET", "/v1/files/" + fid).json_body()["id"] == fid);
  CHECK(request(port, "GET", "/v1/files/" + fid + "/content").body == l.jsonl);
  CHECK(request(port, "GET", "/v1/files").json_body()["data"][0]["id"] == fid);

  const json created = create_batch(port, fid);
  CHECK(created["object"] == "batch");
  CHECK(created["status"] == "validating");
  CHECK(created["metadata"]["job"] == "test");
  CHECK(created["completion_window"] == "24h");
  const json b = wait_final(port, created["id"]);
  INFO(b.dump());
  REQUIRE(b["status"] == "completed");
  CHECK(b["request_counts"] == json{{"total", 12}, {"completed", 12}, {"failed", 0}});
  CHECK(b["error_file_id"].is_null());
  for (const char* t : {"created_at", "in_progress_at", "finalizing_at", "completed_at"}) CHECK(b[t].is_number());
  const auto out = download(port, b["output_file_id"]);
  REQUIRE(out.size() == 12);
  const auto seen = check_outputs(out, oracle(l.prompts, 20));
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 12);

  json list = request(port, "GET", "/v1/batches?limit=1").json_body();
  CHECK(list["object"] == "list");
  CHECK(list["data"].size() == 1);
  CHECK(list["has_more"] == false);

  // A chat batch: each line's body is what /v1/chat/completions answers.
  const json body{{"model", "target"},
                  {"messages", json::array({{{"role", "user"}, {"content", "Hi there"}}})},
                  {"max_tokens", 12},
                  {"return_token_ids", true}};
  const json chat_line{{"custom_id", "chat-0"}, {"method", "POST"}, {"url", "/v1/chat/completions"}, {"body", body}};
  const json cb = wait_final(port, create_batch(port, upload(port, chat_line.dump() + "\n")["id"],
                                                "/v1/chat/completions")["id"]);
  REQUIRE(cb["status"] == "completed");
  const auto chat_out = download(port, cb["output_file_id"]);
  REQUIRE(chat_out.size() == 1);
  const json direct = post(port, "/v1/chat/completions", body).json_body();
  const json& got = chat_out[0]["response"]["body"];
  CHECK(got["object"] == "chat.completion");
  CHECK(got["choices"][0]["token_ids"] == direct["choices"][0]["token_ids"]);
  CHECK(got["choices"][0]["message"] == direct["choices"][0]["message"]);

  CHECK(request(port, "DELETE", "/v1/files/" + fid).json_body()["deleted"] == true);
  CHECK(request(port, "GET", "/v1/files/" + fid).status == 404);
}

TEST_CASE("batches: invalid lines go to the error file and duplicate custom_ids fail validation and API errors") {
  ServerProcess s({"--data-dir", data_dir("invalid")});
  const int port = s.port();
  const Lines good = completion_lines(1, 8);
  std::string jsonl = good.jsonl;
  jsonl += "{not json\n";
  jsonl += R"({"custom_id":"bad-method","method":"GET","url":"/v1/completions","body":{}})" "\n";
  jsonl += R"({"custom_id":"bad-url","method":"POST","url":"/v1/chat/completions","body":{}})" "\n";
  jsonl += R"({"custom_id":"no-body","method":"POST","url":"/v1/completions"})" "\n";
  jsonl += "\n";  // blank lines are skipped
  jsonl += R"({"custom_id":"hot","method":"POST","url":"/v1/completions","body":{"model":"target","prompt":"x","temperature":3}})" "\n";
  const json b = wait_final(port, create_batch(port, upload(port, jsonl)["id"])["id"]);
  INFO(b.dump());
  REQUIRE(b["status"] == "completed");
  CHECK(b["request_counts"] == json{{"total", 6}, {"completed", 1}, {"failed", 5}});
  check_outputs(download(port, b["output_file_id"]), oracle(good.prompts, 8));
  const auto errs = download(port, b["error_file_id"]);
  REQUIRE(errs.size() == 5);
  std::map<std::string, json> by_id;
  for (const auto& e : errs) by_id[e["custom_id"]] = e;
  CHECK(errs[0]["custom_id"] == "");  // the malformed JSON line: no custom_id to give
  CHECK(errs[0]["error"]["message"].get<std::string>().find("not valid JSON") != std::string::npos);
  for (const char* id : {"bad-method", "bad-url", "no-body"}) {
    INFO(id);
    CHECK(by_id[id]["response"].is_null());
    CHECK(by_id[id]["error"]["code"] == "invalid_request");
  }
  CHECK(by_id["hot"]["error"].is_null());
  CHECK(by_id["hot"]["response"]["status_code"] == 400);
  CHECK(by_id["hot"]["response"]["body"]["error"]["param"] == "temperature");

  std::string dup = good.jsonl + good.jsonl;
  const json d = wait_final(port, create_batch(port, upload(port, dup)["id"])["id"]);
  CHECK(d["status"] == "failed");
  CHECK(d["errors"]["data"][0]["code"] == "duplicate_custom_id");
  CHECK(d["errors"]["data"][0]["line"] == 2);
  CHECK(d["failed_at"].is_number());

  const json empty = wait_final(port, create_batch(port, upload(port, "\n")["id"])["id"]);
  CHECK(empty["status"] == "failed");
  CHECK(empty["errors"]["data"][0]["code"] == "empty_file");

  const std::string fid = upload(port, good.jsonl)["id"];
  auto status_of = [&](const json& body) { return post(port, "/v1/batches", body).status; };
  CHECK(status_of({{"input_file_id", "file-nope"}, {"endpoint", "/v1/completions"}, {"completion_window", "24h"}}) == 400);
  CHECK(status_of({{"input_file_id", fid}, {"endpoint", "/v1/embeddings"}, {"completion_window", "24h"}}) == 400);
  CHECK(status_of({{"input_file_id", fid}, {"endpoint", "/v1/completions"}, {"completion_window", "1h"}}) == 400);
  CHECK(status_of({{"input_file_id", fid}, {"endpoint", "/v1/completions"}}) == 400);
  CHECK(status_of({{"input_file_id", fid}, {"endpoint", "/v1/completions"}, {"completion_window", "24h"}, {"x", 1}}) == 400);
  HttpResult nf = request(port, "GET", "/v1/batches/batch_nope");
  CHECK(nf.status == 404);
  CHECK(nf.json_body()["error"]["type"] == "not_found_error");
  CHECK(request(port, "GET", "/v1/files/file-nope/content").status == 404);
  CHECK(request(port, "POST", "/v1/files", "{}", {{"Content-Type", "application/json"}}).status == 400);
  HttpResult wrong = request(port, "POST", "/v1/files", "--b\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n"
                             "fine-tune\r\n--b--\r\n", {{"Content-Type", "multipart/form-data; boundary=b"}});
  CHECK(wrong.status == 400);
  CHECK(wrong.json_body()["error"]["param"] == "purpose");
  CHECK(request(port, "PUT", "/v1/batches").status == 405);
}

TEST_CASE("batches: without --data-dir the Files and Batches APIs say how to turn them on") {
  HttpResult r = request(shared_server().port(), "GET", "/v1/batches");
  CHECK(r.status == 404);
  CHECK(r.json_body()["error"]["message"].get<std::string>().find("--data-dir") != std::string::npos);
}

TEST_CASE("batches: cancel mid-way keeps exactly what was answered") {
  ServerProcess s({"--data-dir", data_dir("cancel")});
  const int port = s.port();
  const Lines l = completion_lines(40, 40);
  const json created = create_batch(port, upload(port, l.jsonl)["id"]);
  const std::string id = created["id"];
  // Cancel once some lines are answered (or at once if they all are before we look).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (get_batch(port, id)["request_counts"]["completed"] < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  HttpResult c = request(port, "POST", "/v1/batches/" + id + "/cancel");
  INFO(c.body);
  REQUIRE(c.status == 200);
  CHECK((c.json_body()["status"] == "cancelling" || c.json_body()["status"] == "cancelled"));
  const json b = wait_final(port, id);
  INFO(b.dump());
  REQUIRE(b["status"] == "cancelled");
  CHECK(b["cancelled_at"].is_number());
  const int64_t done = b["request_counts"]["completed"];
  CHECK(done >= 1);
  CHECK(done < 40);
  const auto out = download(port, b["output_file_id"]);
  CHECK(static_cast<int64_t>(out.size()) == done);
  check_outputs(out, oracle(l.prompts, 40));
  CHECK(request(port, "POST", "/v1/batches/" + id + "/cancel").status == 200);  // idempotent
  // The engine holds nothing of the cancelled batch; the server still serves.
  const json r = post(port, "/v1/completions", {{"model", "target"}, {"prompt", "ok"}, {"max_tokens", 2}}).json_body();
  CHECK(r["choices"].size() == 1);
}

TEST_CASE("batches: kill -9 mid-batch then restart on the same data dir and every line is answered exactly once") {
  const std::string dir = data_dir("kill");
  const Lines l = completion_lines(32, 32);
  std::string id;
  int64_t at_kill = 0;
  {
    ServerProcess s({"--data-dir", dir});
    const int port = s.port();
    id = create_batch(port, upload(port, l.jsonl)["id"])["id"];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
      at_kill = get_batch(port, id)["request_counts"]["completed"];
      if (at_kill >= 2) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    s.signal(SIGKILL);
    REQUIRE(s.wait_exit(20) == 128 + SIGKILL);
  }
  INFO("answered when killed (at least): " << at_kill);
  REQUIRE(at_kill >= 2);
  ServerProcess s2({"--data-dir", dir});
  const json mid = get_batch(s2.port(), id);
  CHECK(mid["request_counts"]["completed"] >= at_kill);  // nothing counted was lost
  REQUIRE(mid["request_counts"]["completed"] < 32);         // the kill did land mid-batch
  const json b = wait_final(s2.port(), id);
  INFO(b.dump());
  REQUIRE(b["status"] == "completed");
  CHECK(b["request_counts"] == json{{"total", 32}, {"completed", 32}, {"failed", 0}});
  const auto out = download(s2.port(), b["output_file_id"]);
  const auto seen = check_outputs(out, oracle(l.prompts, 32));
  CHECK(out.size() == 32);
  for (int i = 0; i < 32; ++i) CHECK(seen.count("req-" + std::to_string(i)) == 1);
}

// The torch-free pieces, without a server.
#include "jobs/batch_lines.h"
#include "jobs/multipart.h"

TEST_CASE("batches: the multipart parser and the batch line reader") {
  using namespace exspec::jobs;
  CHECK(multipart_boundary("multipart/form-data; boundary=abc") == std::optional<std::string>("abc"));
  CHECK(multipart_boundary("Multipart/Form-Data; charset=utf-8; boundary=\"a;b\"") == std::optional<std::string>("a;b"));
  CHECK_FALSE(multipart_boundary("application/json"));
  CHECK_FALSE(multipart_boundary("multipart/form-data"));
  const std::string body = "preamble\r\n--XY\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
                           "--XY\r\ncontent-disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".jsonl\"\r\n"
                           "Content-Type: application/octet-stream\r\n\r\nline1\r\n--XYZ not a boundary\r\n\r\n--XY--\r\n";
  const auto parts = parse_multipart(body, "XY");
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].name == "purpose");
  CHECK(parts[0].data == "batch");
  CHECK(parts[1].name == "file");
  CHECK(parts[1].filename == "a \"b\".jsonl");
  CHECK(parts[1].data == "line1\r\n--XYZ not a boundary\r\n");
  CHECK_THROWS(parse_multipart("--XY\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno end", "XY"));
  CHECK_THROWS(parse_multipart("nothing here", "XY"));

  const std::string ok = R"({"custom_id":"a","method":"POST","url":"/v1/completions","body":{"prompt":"x"}})";
  ParsedBatch p = parse_batch_file(ok + "\r\n\n" + R"({"custom_id":"b","method":"POST","url":"/v1/completions","body":{"stream":true}})" + "\n[1]\n", "/v1/completions", 10);
  CHECK(p.fatal.is_null());
  REQUIRE(p.lines.size() == 1);
  CHECK(p.lines[0].line_no == 1);
  REQUIRE(p.invalid.size() == 2);
  CHECK(p.invalid[0].line_no == 3);
  CHECK(p.invalid[0].custom_id == "b");
  CHECK(p.invalid[1].line_no == 4);
  CHECK(p.total() == 3);
  CHECK(parse_batch_file(ok + "\n" + ok, "/v1/completions", 10).fatal["data"][0]["code"] == "duplicate_custom_id");
  CHECK(parse_batch_file(ok, "/v1/completions", 0).fatal["data"][0]["code"] == "too_many_requests");
  const std::string line = output_line("batch_abc", AnswerRec{7, "a", 0, "", R"({"code":"invalid_request","message":"m"})"});
  CHECK(json::parse(line) == json::parse(R"({"id":"batch_req_abc_7","custom_id":"a","response":null,"error":{"code":"invalid_request","message":"m"}})"));
}

TEST_CASE("batches: the official openai npm client's files and batches calls") {
  const std::string dir = HTTP_TEST_DIR;
  if (!std::filesystem::exists(dir + "/node_modules/openai/package.json"))
    FAIL("the openai npm package is missing: run tests/http/fetch.sh (scripts/test does)");
  ServerProcess s({"--data-dir", data_dir("node")});
  int st = 0;
  const std::string out = run_capture("cd " + dir + " && timeout 150 node openai_batches.mjs http://127.0.0.1:" +
                                      std::to_string(s.port()) + "/v1 target 2>&1", &st);
  INFO(out);
  REQUIRE(st == 0);
  const json j = json::parse(out.substr(out.rfind("\n{") == std::string::npos ? 0 : out.rfind("\n{") + 1));
  CHECK(j["file"]["object"] == "file");
  CHECK(j["file"]["purpose"] == "batch");
  CHECK(j["file"]["filename"] == "in.jsonl");
  CHECK(j["file_retrieved"] == j["file"]["id"]);
  CHECK(j["file_listed"] == true);
  CHECK(j["created_status"] == "validating");
  CHECK(j["batch"]["status"] == "completed");
  CHECK(j["batch"]["request_counts"] == json{{"total", 3}, {"completed", 3}, {"failed", 0}});
  CHECK(j["batch"]["metadata"]["from"] == "node");
  CHECK(j["listed"][0] == j["batch"]["id"]);
  CHECK(j["cancel_done"]["status"] == 409);
  CHECK(j["missing"]["status"] == 404);
  CHECK(j["missing"]["name"] == "NotFoundError");
  CHECK(j["deleted"] == true);
  REQUIRE(j["output"].size() == 3);
  std::vector<std::vector<int64_t>> prompts;
  for (int i = 0; i < 3; ++i) prompts.push_back(bytes_of("Node batch line " + std::to_string(i)));
  for (int i = 0; i < 3; ++i) {
    const json& o = j["output"][i];
    CHECK(o["custom_id"] == std::string(1, static_cast<char>('a' + i)));
    CHECK(o["response"]["body"]["choices"][0]["token_ids"].get<std::vector<int64_t>>() == oracle({prompts[i]}, 8 + i)[0].ids);
  }
}

TEST_CASE("batches: exspec batch runs the same JSONL offline and resumes without repeats") {
  const Lines l = completion_lines(10, 12);
  const std::string in = scratch() + "/offline-in.jsonl", out = scratch() + "/offline-out.jsonl";
  std::ofstream(in) << l.jsonl << "{broken\n";
  const std::string cmd = std::string(EXSPEC_BIN) + " batch --input " + in + " --output " + out + " --model " +
                          models().target + " --draft " + models().draft +
                          " --dtype float64 --batch 4 --threads 1 2>&1";
  int st = 0;
  std::string log = run_capture(cmd, &st);
  INFO(log);
  REQUIRE(st == 0);
  auto read_out = [&] {
    std::vector<json> v;
    std::ifstream f(out);
    std::string line;
    while (std::getline(f, line)) v.push_back(json::parse(line));
    return v;
  };
  std::vector<json> all = read_out();
  REQUIRE(all.size() == 11);
  std::vector<json> ok;
  for (const auto& o : all)
    if (o["error"].is_null()) ok.push_back(o);
  const auto want = oracle(l.prompts, 12);
  CHECK(check_outputs(ok, want).size() == 10);
  // As if killed after 4 lines, in the middle of writing the 5th.
  std::string kept;
  {
    std::ifstream f(out);
    std::string line;
    for (int i = 0; i < 4 && std::getline(f, line); ++i) kept += line + "\n";
  }
  std::ofstream(out, std::ios::trunc) << kept << R"({"id":"batch_req_offline_5","custom_)";
  log = run_capture(cmd, &st);
  REQUIRE(st == 0);
  CHECK(log.find("resuming: 4 lines already") != std::string::npos);
  all = read_out();
  REQUIRE(all.size() == 11);
  ok.clear();
  std::set<int64_t> line_ids;
  for (const auto& o : all) {
    line_ids.insert(std::stoll(o["id"].get<std::string>().substr(18)));
    if (o["error"].is_null()) ok.push_back(o);
  }
  CHECK(line_ids.size() == 11);  // every line once, the malformed one too
  const auto seen = check_outputs(ok, want);
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 10);
  CHECK(seen.size() == 10);
}

TEST_CASE("batches: limits on file size and lines per batch and running batches give clear errors") {
  const std::string cfg = scratch() + "/batch-limits.json";
  std::ofstream(cfg) << R"({"limits": {"max_file_bytes": 1000, "max_batch_lines": 2, "max_active_batches": 1}})";
  ServerProcess s({"--data-dir", data_dir("limits"), "--config", cfg});
  const int port = s.port();
  const Lines three = completion_lines(3, 4);
  const Lines big = completion_lines(12, 4);
  REQUIRE(big.jsonl.size() > 1000);
  const std::string b = "bnd";
  HttpResult r = request(port, "POST", "/v1/files",
                         "--" + b + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--" + b +
                             "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\n" + big.jsonl +
                             "\r\n--" + b + "--\r\n",
                         {{"Content-Type", "multipart/form-data; boundary=" + b}});
  CHECK(r.status == 413);
  CHECK(r.json_body()["error"]["code"] == "file_too_large");
  CHECK(r.json_body()["error"]["message"].get<std::string>().find("limits.max_file_bytes") != std::string::npos);
  REQUIRE(three.jsonl.size() <= 1000);
  const json t = wait_final(port, create_batch(port, upload(port, three.jsonl)["id"])["id"]);
  CHECK(t["status"] == "failed");
  CHECK(t["errors"]["data"][0]["code"] == "too_many_requests");
  // One batch at a time: a second one while the first runs is refused with 429.
  const Lines two = completion_lines(2, 300);
  const std::string fid = upload(port, two.jsonl)["id"];
  const json first = create_batch(port, fid);
  HttpResult second = post(port, "/v1/batches", {{"input_file_id", fid}, {"endpoint", "/v1/completions"},
                                                 {"completion_window", "24h"}});
  if (get_batch(port, first["id"])["status"] != "completed") {  // the first may have finished already
    CHECK(second.status == 429);
    CHECK(second.json_body()["error"]["code"] == "batch_limit_reached");
  }
  CHECK(wait_final(port, first["id"])["status"] == "completed");
}

TEST_CASE("batches: sampled lines (temperature, seed, n) equal plain sampling of the target") {
  ServerProcess s({"--data-dir", data_dir("sampled")});
  const int port = s.port();
  std::string jsonl;
  std::vector<std::vector<int64_t>> prompts;
  for (int i = 0; i < 3; ++i) {
    prompts.push_back(bytes_of("Sampled line " + std::to_string(i)));
    json line{{"custom_id", "req-" + std::to_string(i)},
              {"method", "POST"},
              {"url", "/v1/completions"},
              {"body", {{"model", "target"}, {"prompt", prompts.back()}, {"max_tokens", 12}, {"temperature", 1.1},
                        {"top_k", 30}, {"seed", 500 + i}, {"n", 2}, {"return_token_ids", true}}}};
    jsonl += line.dump() + "\n";
  }
  const json b = wait_final(port, create_batch(port, upload(port, jsonl)["id"])["id"]);
  REQUIRE(b["status"] == "completed");
  const auto out = download(port, b["output_file_id"]);
  REQUIRE(out.size() == 3);
  for (const json& o : out) {
    INFO(o.dump());
    const int i = std::stoi(o["custom_id"].get<std::string>().substr(4));
    const json& body = o["response"]["body"];
    CHECK(body["seed"] == 500 + i);
    const auto want = sampled_oracle(prompts[i], 12, "--temperature 1.1 --top-k 30 --n 2 --seed " + std::to_string(500 + i));
    REQUIRE(body["choices"].size() == 2);
    for (size_t c = 0; c < 2; ++c) CHECK(body["choices"][c]["token_ids"].get<std::vector<int64_t>>() == want[c].ids);
  }
}
