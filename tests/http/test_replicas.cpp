// Test names carry no ',' or ';': CTest would cut the name at ';' and Catch read ',' as "or".
// Scale-out with real parts: a PostgreSQL server, two `exspec serve --job-store postgresql://...`
// replicas and HAProxy (config/haproxy.cfg), all on loopback and started here. A replica is
// killed with kill -9 in the middle of a batch; every line must still be answered exactly once,
// equal to the float64 oracle, and the lines the dead replica held must be claimed again by the
// other once their lease has expired, not before. Leases are 2 s here (30 s by default).
#include <csignal>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "http/metrics.h"
#include "tests/http/batch_support.h"
#include "tests/http/cluster_support.h"
#include "tests/http/support.h"

using namespace exspec::httptest;

namespace {

constexpr int kLeaseMs = 2000;

std::vector<std::string> replica_flags(const PgServer& pg, const std::string& name) {
  return {"--job-store", pg.url(), "--replica", name, "--batch-lease-ms", std::to_string(kLeaseMs)};
}

// A sample of this replica's /metrics (samples carry replica="NAME"); -1 when absent.
double replica_metric(int port, const std::string& name, const std::string& replica) {
  const std::string text = request(port, "GET", "/metrics").body;
  const std::string key = name + "{replica=\"" + replica + "\"} ";
  const auto at = text.find(key);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size()));
}

int64_t as_int(const std::string& s) { return s.empty() ? 0 : std::stoll(s); }

// Polls until f() is true; FAILs with `what` after timeout_s.
template <class F>
void wait_until(F f, int timeout_s, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (!f()) {
    if (std::chrono::steady_clock::now() > deadline) FAIL("timed out waiting for " << what);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void kill9(ServerProcess& s) {
  s.signal(SIGKILL);
  REQUIRE(s.wait_exit(20) == 128 + SIGKILL);
}

}  // namespace

TEST_CASE("replicas: PostgreSQL and two replicas behind HAProxy survive a kill -9 mid-batch with every line answered exactly once") {
  PgServer pg;
  ServerProcess r1(replica_flags(pg, "r1"));
  auto r2 = std::make_unique<ServerProcess>(replica_flags(pg, "r2"));
  Balancer lb({r1.port(), r2->port()});
  const int port = lb.port();
  // A stream passes through the balancer whole: its events add up to the plain answer.
  const json req{{"model", "target"}, {"prompt", "Through the balancer"}, {"max_tokens", 24}};
  const std::string plain = post(r1.port(), "/v1/completions", req).json_body()["choices"][0]["text"];
  json streamed_req = req;
  streamed_req["stream"] = true;
  const HttpResult s = post(port, "/v1/completions", streamed_req);
  REQUIRE(s.status == 200);
  CHECK(s.headers.at("content-type") == "text/event-stream");
  bool done = false;
  std::string streamed;
  for (const json& e : sse_events(s.body, &done))
    if (!e["choices"].empty()) streamed += e["choices"][0]["text"].get<std::string>();
  CHECK(done);
  CHECK(streamed == plain);

  constexpr int kLines = 500, kTokens = 6;
  const Lines l = completion_lines(kLines, kTokens);
  const json f = upload(port, l.jsonl);
  const std::string fid = f["id"];
  // Every replica sees the file, whichever one the balancer gave the upload to.
  CHECK(request(r1.port(), "GET", "/v1/files/" + fid + "/content").body == l.jsonl);
  CHECK(request(r2->port(), "GET", "/v1/files/" + fid + "/content").body == l.jsonl);
  const std::string id = create_batch(port, fid)["id"];

  // Kill r2 once both replicas have answered lines and the batch is well under way.
  const std::string by_replica = "SELECT count(*) FILTER (WHERE replica LIKE 'r1/%'), count(*) FILTER (WHERE replica "
                                 "LIKE 'r2/%') FROM exspec_answers WHERE batch_id = '" + id + "'";
  wait_until([&] {
    const std::string row = pg.psql(by_replica);
    const int64_t a = as_int(row.substr(0, row.find('|'))), b = as_int(row.substr(row.find('|') + 1));
    return a >= 20 && b >= 20;
  }, 240, "both replicas to answer 20 lines");
  kill9(*r2);
  const std::string at_kill = pg.psql(by_replica + "; SELECT count(*) FROM exspec_batch_lines WHERE batch_id = '" + id +
                                      "' AND owner LIKE 'r2/%'");
  INFO("answered by r1|r2 at the kill, then lines r2 held: " << at_kill);
  const int64_t answered_at_kill = as_int(pg.psql("SELECT count(*) FROM exspec_answers WHERE batch_id = '" + id + "'"));
  REQUIRE(answered_at_kill < kLines);  // the kill did land mid-batch

  // Polled through the balancer, which takes the dead replica out (and retries a refused connection).
  const json b = wait_final(port, id, 240);
  INFO(b.dump());
  REQUIRE(b["status"] == "completed");
  CHECK(b["request_counts"] == json{{"total", kLines}, {"completed", kLines}, {"failed", 0}});
  const auto out = download(port, b["output_file_id"]);
  CHECK(out.size() == static_cast<size_t>(kLines));
  const auto seen = check_outputs(out, oracle(l.prompts, kTokens));
  for (int i = 0; i < kLines; ++i) CHECK(seen.count("req-" + std::to_string(i)) == 1);
  CHECK(pg.psql("SELECT count(*), count(DISTINCT line_no) FROM exspec_answers WHERE batch_id = '" + id + "'") ==
        std::to_string(kLines) + "|" + std::to_string(kLines) + "\n");
  CHECK(pg.psql("SELECT count(*) FROM exspec_batch_lines WHERE batch_id = '" + id + "'") == "0\n");

  // The killed replica comes back: it and the survivor serve the same output, byte for byte.
  r2 = std::make_unique<ServerProcess>(replica_flags(pg, "r2"));
  const std::string path = "/v1/files/" + b["output_file_id"].get<std::string>() + "/content";
  const std::string via_lb = request(port, "GET", path).body;
  CHECK(request(r1.port(), "GET", path).body == via_lb);
  CHECK(request(r2->port(), "GET", path).body == via_lb);
  CHECK(get_batch(r2->port(), id)["request_counts"] == b["request_counts"]);
}

TEST_CASE("replicas: lines leased by a replica killed with kill -9 are claimed again after the lease and not before") {
  PgServer pg;
  ServerProcess r1(replica_flags(pg, "r1"));
  auto r2 = std::make_unique<ServerProcess>(replica_flags(pg, "r2"));
  constexpr int kLines = 200, kTokens = 32;  // ~10 s of work for the two: r2 is caught holding lines
  const Lines l = completion_lines(kLines, kTokens);
  const std::string id = create_batch(r1.port(), upload(r1.port(), l.jsonl)["id"])["id"];
  const std::string r2_held = "SELECT count(*) FROM exspec_batch_lines WHERE batch_id = '" + id +
                              "' AND owner LIKE 'r2/%' AND lease_until > clock_timestamp()";
  wait_until([&] {
    REQUIRE(get_batch(r1.port(), id)["status"] != "completed");  // too little work for the machine: make more
    return replica_metric(r2->port(), "exspec_batch_lines_claimed_total", "r2") >= 1 && as_int(pg.psql(r2_held)) >= 1;
  }, 240, "r2 to hold leases");
  kill9(*r2);
  const auto killed = std::chrono::steady_clock::now();
  // What r2 held when it died: those rows keep its name until someone claims them again.
  std::map<int64_t, double> held;  // line -> lease end (database clock, epoch seconds)
  std::istringstream rows(pg.psql("SELECT line_no, extract(epoch FROM lease_until) FROM exspec_batch_lines WHERE "
                                  "batch_id = '" + id + "' AND owner LIKE 'r2/%'"));
  for (std::string row; std::getline(rows, row);)
    held[std::stoll(row.substr(0, row.find('|')))] = std::stod(row.substr(row.find('|') + 1));
  INFO("lines r2 held: " << held.size());
  REQUIRE(!held.empty());

  wait_until([&] { return replica_metric(r1.port(), "exspec_batch_lines_reclaimed_total", "r1") >= 1; }, 60,
             "r1 to claim r2's lines again");
  const double reclaim_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  const json b = wait_final(r1.port(), id, 240);
  INFO(b.dump());
  REQUIRE(b["status"] == "completed");
  CHECK(b["request_counts"] == json{{"total", kLines}, {"completed", kLines}, {"failed", 0}});
  const auto seen = check_outputs(download(r1.port(), b["output_file_id"]), oracle(l.prompts, kTokens));
  for (int i = 0; i < kLines; ++i) CHECK(seen.count("req-" + std::to_string(i)) == 1);
  CHECK(replica_metric(r1.port(), "exspec_batch_lines_reclaimed_total", "r1") >= static_cast<double>(held.size()));
  // Each held line was answered by r1, and only after r2's lease on it had run out.
  std::istringstream ans(pg.psql("SELECT line_no, replica, extract(epoch FROM answered_at) FROM exspec_answers WHERE "
                                 "batch_id = '" + id + "'"));
  size_t checked = 0;
  for (std::string row; std::getline(ans, row);) {
    const auto p1 = row.find('|'), p2 = row.find('|', p1 + 1);
    const auto it = held.find(std::stoll(row.substr(0, p1)));
    if (it == held.end()) continue;
    INFO("line " << it->first << ": " << row << ", lease until " << it->second);
    CHECK(row.substr(p1 + 1, 3) == "r1/");
    CHECK(std::stod(row.substr(p2 + 1)) >= it->second);
    ++checked;
  }
  CHECK(checked == held.size());
  std::printf("replicas: %zu lines held by the killed replica; first re-claimed %.2f s after the kill (lease %d ms)\n",
              held.size(), reclaim_s, kLeaseMs);
}

TEST_CASE("replicas: a cancel through one replica stops the lines running on the other") {
  PgServer pg;
  ServerProcess r1(replica_flags(pg, "r1")), r2(replica_flags(pg, "r2"));
  // A line outlasts the runner's 200 ms look at the store (lines start and end together: at 160
  // tokens a batch of them could finish between two looks, and r2 then had nothing left to cancel).
  constexpr int kLines = 100, kTokens = 400;  // the oracle's work about as at 200 x 160
  const Lines l = completion_lines(kLines, kTokens);
  const auto want = oracle(l.prompts, kTokens);
  // The property needs r2 to be running lines of the batch when the cancel is recorded. Under
  // load r2 can be between lines at that moment (its engine empty while it claims more), and a
  // look at its active sequences after the cancel races its own 200 ms look at the store. So an
  // attempt counts only when r2's cancelled-sequences counter moved: r2 heard of the cancel through
  // the database and cancelled lines it was running. Otherwise it is made again with a new batch.
  std::string id;
  json b;
  bool r2_cancelled = false;
  for (int attempt = 0; attempt < 5 && !r2_cancelled; ++attempt) {
    const double cancelled_before = replica_metric(r2.port(), "exspec_sequences_cancelled_total", "r2");
    id = create_batch(r1.port(), upload(r1.port(), l.jsonl)["id"])["id"];
    // A claimed line may still wait in r2's runner, and an abort of it cancels no sequence: wait
    // for lines in r2's engine.
    wait_until([&] { return replica_metric(r2.port(), "exspec_active_sequences", "r2") >= 1 &&
                            get_batch(r1.port(), id)["request_counts"]["completed"] >= 4; }, 240, "both to run lines");
    REQUIRE(request(r1.port(), "POST", "/v1/batches/" + id + "/cancel").status == 200);
    b = wait_final(r2.port(), id, 60);
    INFO(b.dump());
    REQUIRE(b["status"] == "cancelled");
    const int64_t done = b["request_counts"]["completed"];
    CHECK(done < kLines);
    // Nothing was answered after the cancel: the output holds exactly what was counted.
    const auto out = download(r2.port(), b["output_file_id"]);
    CHECK(static_cast<int64_t>(out.size()) == done);
    check_outputs(out, want);
    for (auto* s : {&r1, &r2})
      wait_until([&] { return replica_metric(s->port(), "exspec_active_sequences", s == &r1 ? "r1" : "r2") == 0; }, 30,
                 "the engines to drop the cancelled lines");
    r2_cancelled = replica_metric(r2.port(), "exspec_sequences_cancelled_total", "r2") > cancelled_before;
    // The batch's counts are final on both replicas, read through either.
    CHECK(get_batch(r1.port(), id)["request_counts"] == b["request_counts"]);
  }
  INFO("r2 cancelled no line it was running, in five attempts");
  CHECK(r2_cancelled);
}

TEST_CASE("replicas: an unreachable job store is a clear start-up error and /metrics labels every sample") {
  int st = 0;
  const std::string log = run_capture(std::string(EXSPEC_BIN) + " serve --model " + models().target +
                                      " --port 0 --job-store 'postgresql:///exspec?host=/nonexistent-dir' 2>&1", &st);
  INFO(log);
  CHECK(st == 1);
  CHECK(log.find("cannot open the job store") != std::string::npos);
  CHECK(run_capture(std::string(EXSPEC_BIN) + " serve --model " + models().target + " --job-store mysql://x 2>&1", &st).find("postgresql://") !=
        std::string::npos);
  CHECK(st != 0);

  using exspec::http::with_label;
  CHECK(with_label("# HELP a b\n# TYPE a counter\na 1\nb{x=\"y\"} 2\nc_bucket{le=\"+Inf\"} 3\n", "replica", "r\"1") ==
        "# HELP a b\n# TYPE a counter\na{replica=\"r\\\"1\"} 1\nb{replica=\"r\\\"1\",x=\"y\"} 2\n"
        "c_bucket{replica=\"r\\\"1\",le=\"+Inf\"} 3\n");
}

TEST_CASE("replicas: a response kept through one replica is read, continued and deleted through the other") {
  PgServer pg;
  ServerProcess r1(replica_flags(pg, "r1")), r2(replica_flags(pg, "r2"));
  const HttpResult first = post(r1.port(), "/v1/responses", {{"input", "Hello"}, {"max_output_tokens", 4}, {"temperature", 0}});
  REQUIRE(first.status == 200);
  const std::string id = first.json_body()["id"];
  CHECK(first.json_body()["store"] == true);
  const HttpResult got = request(r2.port(), "GET", "/v1/responses/" + id);
  REQUIRE(got.status == 200);
  CHECK(got.json_body()["output"] == first.json_body()["output"]);
  const HttpResult next = post(r2.port(), "/v1/responses", {{"input", "More"}, {"previous_response_id", id},
                                                            {"max_output_tokens", 4}, {"temperature", 0}});
  REQUIRE(next.status == 200);
  CHECK(next.json_body()["usage"]["input_tokens"] > first.json_body()["usage"]["input_tokens"]);
  CHECK(request(r2.port(), "DELETE", "/v1/responses/" + id).status == 200);
  CHECK(request(r1.port(), "GET", "/v1/responses/" + id).status == 404);
  CHECK(as_int(pg.psql("SELECT count(*) FROM exspec_responses")) == 1);  // the continuation's
}
