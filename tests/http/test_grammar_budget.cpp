// Hostile grammars against real `exspec serve` processes (issue 55): counts that would expand a
// grammar beyond the automaton's budget are refused by keyword and path before any work, every
// compile ends within its CPU budget, a client that goes away mid-compile cancels it, SIGTERM
// ends a server that is compiling and streaming within its drain bound, and decoding for other
// clients goes on while hostile compiles run.
#include <atomic>
#include <csignal>
#include <future>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include "tests/http/batch_support.h"
#include "tests/http/fairness_support.h"
#include "tests/http/socket.h"
#include "tests/http/support.h"

using namespace exspec::httptest;
namespace net = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// The costliest kind of schema the bounds still let through: n strings of distinct maxLength
// near the state budget, each its own rule of about 19,000 DFA states (about 0.07 s apiece on
// the test vocabulary). `salt` keeps otherwise equal schemas apart (no cache hits).
json costly_schema(int n, int salt = 0) {
  json props = json::object();
  for (int i = 0; i < n; ++i) props["s" + std::to_string(salt) + "p" + std::to_string(i)] = {{"type", "string"}, {"maxLength", 400 + i % 90}};
  return {{"type", "object"}, {"properties", props}};
}

// The server's CPU seconds over `seconds` of wall time.
double cpu_over(int pid, double seconds) {
  const double before = cpu_seconds(pid);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return cpu_seconds(pid) - before;
}

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A request written on a raw connection that the test can close at any moment.
struct RawClient {
  net::io_context ioc;
  net::ip::tcp::socket sock;
  RawClient(int port, const json& body) : sock(connect_loopback(ioc, port, 60)) {
    const std::string b = body.dump();
    const std::string req = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                            std::to_string(b.size()) + "\r\n\r\n" + b;
    net::write(sock, net::buffer(req));
  }
};

// Polls /metrics until `name` reaches `value` (at most `timeout_s`); returns the seconds it took.
double wait_metric(int port, const std::string& name, double value, double timeout_s) {
  const auto t0 = Clock::now();
  while (since(t0) < timeout_s && metric(port, name) < value) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return since(t0);
}

}  // namespace

TEST_CASE("hostile grammars: every expanding count is refused by keyword and path before any work, within the budget") {
  ServerProcess srv;
  const int port = srv.port();
  const json integers{{"type", "integer"}};
  auto array_of = [](const json& items, int min_items) { return json{{"type", "array"}, {"minItems", min_items}, {"items", items}}; };
  struct Case {
    json schema;
    std::string keyword, path;  // what the 400 names (empty: only that it is a 400)
  };
  const std::vector<Case> cases{
      {{{"type", "array"}, {"items", integers}, {"minItems", 100000}}, "minItems", "#/minItems"},
      {{{"type", "array"}, {"items", integers}, {"minItems", 10000000}}, "minItems", "#/minItems"},
      {{{"type", "array"}, {"items", integers}, {"maxItems", 1000000}}, "maxItems", "#/maxItems"},
      {{{"type", "array"}, {"items", integers}, {"minItems", 1e10}}, "minItems", "#/minItems"},  // no int wrap-around
      {{{"type", "object"}, {"minProperties", 100000}}, "minProperties", "#/minProperties"},
      {{{"type", "object"}, {"maxProperties", 10000000}}, "maxProperties", "#/maxProperties"},
      {{{"type", "string"}, {"minLength", 10000000}}, "minLength", "#/minLength"},
      {{{"type", "string"}, {"maxLength", 4294967297LL}}, "maxLength", "#/maxLength"},
      {{{"type", "string"}, {"pattern", "^a{1000000}$"}}, "repetition", "#/pattern"},
      {{{"type", "string"}, {"pattern", "^((ab{40}){40}){40}$"}}, "repetition", "#/pattern"},  // a product of counts
      // nested arrays: the inner count refused where it stands
      {array_of(array_of(integers, 100000), 1000), "minItems", "#/items/minItems"},
      // moderate counts that multiply once the small inner arrays are inlined
      {array_of(array_of(array_of(integers, 150), 150), 150), "too large", ""},
      {{{"type", "array"}, {"prefixItems", json::array()}, {"items", integers}, {"minItems", 20000}}, "minItems", "#/minItems"},
      {costly_schema(60), "--grammar-compile-budget", ""},  // allowed by every bound, over the CPU budget
  };
  for (const Case& c : cases) {
    INFO(c.schema.dump().substr(0, 300));
    const auto t0 = Clock::now();
    HttpResult r = post(port, "/v1/completions", constrained(c.schema));
    const double took = since(t0);
    INFO(r.body << "\nanswered in " << took << " s");
    REQUIRE(r.status == 400);
    const std::string message = r.json_body()["error"]["message"];
    if (!c.keyword.empty()) CHECK(message.find(c.keyword) != std::string::npos);
    if (!c.path.empty()) CHECK(message.find(c.path) != std::string::npos);
    // Nothing goes on after the answer: the server is idle again.
    CHECK(cpu_over(srv.pid(), 0.4) < 0.2);
    CHECK(metric(port, "exspec_grammar_compiles_running") == 0);
  }
  CHECK(metric(port, "exspec_grammar_compiles_over_budget_total") >= 1);
  CHECK(metric(port, "exspec_grammar_cache_entries") == 0);  // nothing refused was cached
  // The next requests are served: free text, and a schema within the bounds.
  CHECK(post(port, "/v1/completions", {{"prompt", "ok"}, {"max_tokens", 2}}).status == 200);
  HttpResult ok = post(port, "/v1/completions", constrained({{"type", "array"}, {"items", integers}, {"minItems", 2}}));
  INFO(ok.body);
  CHECK(ok.status == 200);
}

TEST_CASE("hostile grammars: a client that disconnects mid-compile frees the compile") {
  // A budget large enough that only the disconnect can end the compile early.
  ServerProcess srv({"--grammar-compile-budget", "60"});
  const int port = srv.port();
  for (bool stream : {false, true}) {
    INFO("stream " << stream);
    const double cancelled = metric(port, "exspec_grammar_compiles_cancelled_total");
    {
      RawClient c(port, constrained(costly_schema(20, stream ? 1 : 2), stream));
      REQUIRE(wait_metric(port, "exspec_grammar_compiles_running", 1, 20) < 20);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // well inside the compile
      c.sock.close();
    }
    const auto closed = Clock::now();
    const double freed = wait_metric(port, "exspec_grammar_compiles_cancelled_total", cancelled + 1, 10);
    WARN("compile cancelled " << freed * 1000 << " ms after the disconnect (metric polled over HTTP)");
    CHECK(freed < 1.0);  // loose: the flag is checked at every step; see the report for the figure
    CHECK(metric(port, "exspec_grammar_compiles_running") == 0);
    CHECK(cpu_over(srv.pid(), 0.4) < 0.2);  // back to idle
    (void)closed;
  }
  CHECK(metric(port, "exspec_grammar_cache_entries") == 0);
  // The same grammar, asked for again, compiles from scratch: nothing of the cancelled one was kept.
  CHECK(post(port, "/v1/completions", {{"prompt", "ok"}, {"max_tokens", 2}}).status == 200);
}

TEST_CASE("shutdown: SIGTERM during a long compile and a stream exits 0 within the drain bound") {
  const int drain = 1;
  ServerProcess srv({"--grammar-compile-budget", "60", "--shutdown-drain", std::to_string(drain)});
  const int port = srv.port();
  // The status a request ends with; 0 when the server closed the connection before a whole answer.
  auto status_of = [port](const json& body) {
    try {
      return post(port, "/v1/completions", body, 60).status;
    } catch (const std::exception&) {
      return 0;
    }
  };
  // A compile of about 1.7 s of CPU: longer than the drain.
  auto compile = std::async(std::launch::async, [&] { return status_of(constrained(costly_schema(25))); });
  auto stream = std::async(std::launch::async, [&] { return status_of({{"prompt", "long"}, {"max_tokens", 480}, {"stream", true}}); });
  REQUIRE(wait_metric(port, "exspec_grammar_compiles_running", 1, 20) < 20);
  REQUIRE(wait_metric(port, "exspec_requests_in_flight", 2, 20) < 20);
  const auto t0 = Clock::now();
  srv.signal(SIGTERM);
  const int status = srv.wait_exit(drain + 20);
  const double took = since(t0);
  INFO("server log:\n" << srv.log());
  WARN("SIGTERM to exit: " << took << " s (drain bound " << drain << " s)");
  CHECK(status == 0);
  CHECK(took < drain + 2.0);  // the bound plus 1 s, and 1 s of slack for a loaded machine
  const int c = compile.get();
  CHECK((c == 503 || c == 0));  // cancelled at the drain's end (or the connection closed)
  const int s = stream.get();
  CHECK((s == 200 || s == 0));  // a stream's head is out: it ends early, or with the connection
}

TEST_CASE("shutdown: a second SIGTERM exits at once, and finished batch lines are kept") {
  const std::string dir = data_dir("second-signal");
  const Lines l = completion_lines(24, 32);
  std::string id;
  int64_t before = 0;
  {
    ServerProcess s({"--data-dir", dir, "--grammar-compile-budget", "60", "--shutdown-drain", "30"});
    const int port = s.port();
    id = create_batch(port, upload(port, l.jsonl)["id"])["id"];
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    while (Clock::now() < deadline && (before = get_batch(port, id)["request_counts"]["completed"]) < 2)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE(before >= 2);
    RawClient c(port, constrained(costly_schema(20, 3)));  // a long compile in flight too
    REQUIRE(wait_metric(port, "exspec_grammar_compiles_running", 1, 20) < 20);
    s.signal(SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto t0 = Clock::now();
    s.signal(SIGTERM);
    CHECK(s.wait_exit(5) == 128 + SIGTERM);
    WARN("second SIGTERM to exit: " << since(t0) << " s");
  }
  ServerProcess s({"--data-dir", dir});
  const json b = wait_final(s.port(), id, 120);
  INFO(b.dump());
  REQUIRE(b["status"] == "completed");
  CHECK(b["request_counts"]["completed"] == 24);
  const std::multiset<std::string> seen = check_outputs(download(s.port(), b["output_file_id"]), oracle(l.prompts, 32));
  CHECK(seen.size() == 24);
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 24);  // each line once: none lost, none twice
}

// [serial]: CTest runs it alone (tests/http/CMakeLists.txt), so that no other test's processes
// share the cores with one phase and not the other; the phases alternate, twice each, so that a
// slow spell of the machine falls on both.
TEST_CASE("fairness: streaming clients' pace, alone and while 16 clients send the costliest compiles allowed", "[serial]") {
  ServerProcess srv;
  const int port = srv.port();
  std::atomic<bool> failed{false};
  std::atomic<int> salt{100}, hostile_ok{0}, hostile_over{0}, hostile_bad{0};
  auto attacked_rate = [&] {
    std::atomic<bool> attacking{true};
    std::vector<std::thread> attackers;
    for (int i = 0; i < 16; ++i)
      attackers.emplace_back([&] {
        while (attacking) {
          // About half the budget each on an idle machine: what the bounds and the budget allow.
          HttpResult r = post(port, "/v1/completions", constrained(costly_schema(8, salt++)), 120);
          if (r.status == 200) ++hostile_ok;
          else if (r.status == 400 && r.body.find("grammar-compile-budget") != std::string::npos) ++hostile_over;
          else ++hostile_bad;
        }
      });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the compile pool is busy
    const double rate = streaming_rate(port, 3, failed);
    attacking = false;
    for (auto& a : attackers) a.join();
    return rate;
  };
  double alone = 0, attacked = 0;
  for (int round = 0; round < 2; ++round) {
    alone += streaming_rate(port, 3, failed);
    attacked += attacked_rate();
  }
  const double ratio = attacked / alone;
  WARN("8 streaming clients: " << alone / 2 << " tokens/s alone, " << attacked / 2 << " under 16 hostile compile clients: "
       << ratio << "x; hostile compiles answered 200: " << hostile_ok << ", 400 over budget: " << hostile_over);
  CHECK_FALSE(failed);
  CHECK(hostile_bad == 0);
  CHECK(hostile_ok + hostile_over > 0);
  CHECK(ratio >= fairness_bound());  // both rates from this run; the bound when asked (fairness_support.h)
}
