// The KV cache budget (--kv-cache-memory): the slots' context is capped so that the stores fit,
// the cap is what /v1/models, /tokenize and the errors say, a request beyond it is a 400 naming
// the limit, one within it is answered as plain decoding, and a budget too small for any
// sequence stops the server at start with a message naming the flag. /metrics's process figures
// agree with /proc, and the start-up line says each model's weight and KV store bytes.
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;

TEST_CASE("kv cache memory: the budget caps the context, requests beyond it are a 400 naming the limit") {
  // 2 slots of the tiny pair in float64: a few hundred positions fit in 512 KiB.
  ServerProcess s({"--kv-cache-memory", "512K", "--batch", "2", "--slots", "2"});
  const json card = request(s.port(), "GET", "/v1/models").json_body()["data"][0];
  const int64_t context = card["settings"]["context"];
  const json tok = post(s.port(), "/tokenize", {{"prompt", "x"}}).json_body();
  CHECK(tok["max_model_len"] == context);
  CHECK(s.log().find("the longest sequence: " + std::to_string(context) + " tokens (budget") != std::string::npos);
  CHECK(context >= 16);
  CHECK(context < 2048);  // below the tiny model's own context: the budget decided it
  const auto small = bytes_of("Fits easily");
  HttpResult ok = post(s.port(), "/v1/completions", {{"prompt", small}, {"max_tokens", 8}, {"return_token_ids", true}});
  REQUIRE(ok.status == 200);
  CHECK(ok.json_body()["choices"][0]["token_ids"].get<std::vector<int64_t>>() == oracle({small}, 8).at(0).ids);
  const std::vector<int64_t> long_prompt(static_cast<size_t>(context - 4), 65);
  HttpResult too_long = post(s.port(), "/v1/completions", {{"prompt", long_prompt}, {"max_tokens", 8}});
  CHECK(too_long.status == 400);
  CHECK(too_long.json_body()["error"]["code"] == "context_length_exceeded");
  CHECK(too_long.json_body()["error"]["message"].get<std::string>().find(std::to_string(context)) != std::string::npos);
}

TEST_CASE("kv cache memory: a budget that holds no sequence stops the server at start, naming the flag") {
  ServerProcess s({"--kv-cache-memory", "1K"}, /*wait_ready=*/false);
  CHECK(s.wait_exit(60) != 0);
  CHECK(s.log().find("--kv-cache-memory") != std::string::npos);
  ServerProcess bad({"--kv-cache-memory", "lots"}, /*wait_ready=*/false);
  CHECK(bad.wait_exit(60) != 0);
  CHECK(bad.log().find("K, M, G or T") != std::string::npos);
}

TEST_CASE("kv cache memory: more clients than the blocks hold wait or are pre-empted, and all answer as the oracle") {
  // The tiny pair in float64 (2,560 bytes a position for both models): 4 slots of 24 positions
  // in blocks of 4, 96 in all. One of these sequences takes 84 and its drafts: with two live,
  // one goes back to the queue; the others wait for blocks.
  ServerProcess s({"--kv-cache-memory", "256K", "--slots", "4", "--batch", "4", "--block-size", "4"});
  CHECK(s.log().find("blocks of 4 positions (--block-size)") != std::string::npos);
  const int n = 6;
  std::vector<std::vector<int64_t>> prompts;
  for (int i = 0; i < n; ++i) prompts.push_back(bytes_of("Client " + std::to_string(i) + " asks a question"));
  const int64_t max_tokens = 60;
  const auto want = oracle(prompts, max_tokens);
  std::vector<std::vector<int64_t>> got(n);
  std::vector<int> status(n, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      HttpResult r = post(s.port(), "/v1/completions",
                          {{"prompt", prompts[i]}, {"max_tokens", max_tokens}, {"return_token_ids", true}}, 120);
      status[i] = r.status;
      if (r.status == 200) got[i] = r.json_body()["choices"][0]["token_ids"].get<std::vector<int64_t>>();
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(status[i] == 200);
    CHECK(got[i] == want[i].ids);
  }
  CHECK(metric(s.port(), "exspec_kv_blocks") > 0);
  CHECK(metric(s.port(), "exspec_kv_blocks_used") == 0);  // every sequence ended: nothing held
  CHECK(metric(s.port(), "exspec_preemptions_total") > 0);
}

namespace {

// A field of /proc/PID/status in bytes (VmRSS, VmSize: given there in kB).
double proc_status_bytes(int pid, const std::string& field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) * 1024;
  return -1;
}

}  // namespace

TEST_CASE("metrics: the process figures Prometheus clients export, and the start-up line's weight and KV bytes") {
  const auto before = std::chrono::system_clock::now();
  ServerProcess s({"--kv-cache-memory", "512K", "--batch", "2", "--slots", "2"});
  REQUIRE(post(s.port(), "/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 4}}).status == 200);
  const auto v = metrics(s.port(), {"process_resident_memory_bytes", "process_virtual_memory_bytes",
                                    "process_start_time_seconds", "process_cpu_seconds_total", "process_open_fds",
                                    "process_max_fds"});
  const double rss = proc_status_bytes(s.pid(), "VmRSS"), vsize = proc_status_bytes(s.pid(), "VmSize");
  CHECK(v[0] > 0.8 * rss);  // read a moment apart: resident memory moves a little
  CHECK(v[0] < 1.2 * rss);
  CHECK(v[1] > 0.8 * vsize);
  CHECK(v[1] < 1.2 * vsize);
  const double started = std::chrono::duration<double>(before.time_since_epoch()).count();
  CHECK(v[2] > started - 5);  // the server's process, started after `before` (clock ticks of 10 ms)
  CHECK(v[2] < started + 120);
  CHECK(v[3] > 0);
  CHECK(v[4] >= 3);  // at least the listening socket, the log and a connection
  CHECK(v[4] < v[5]);
  // exspec: memory: target weights N bytes (...) in float64, KV store M bytes (...)
  for (const char* role : {"target", "draft"}) {
    const std::string at = std::string("exspec: memory: ") + role + " weights ";
    const size_t p = s.log().find(at);
    REQUIRE(p != std::string::npos);
    const std::string line = s.log().substr(p, s.log().find('\n', p) - p);
    CAPTURE(line);
    CHECK(std::stoll(line.substr(at.size())) > 0);
    CHECK(line.find(" in float64, KV store ") != std::string::npos);
    CHECK(std::stoll(line.substr(line.find("KV store ") + 9)) > 0);
  }
}
