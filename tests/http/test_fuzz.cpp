// A bounded fuzz test (issue 19): thousands of generated malformed requests (tests/http/fuzz_gen.h)
// across every endpoint against one real `exspec serve --data-dir`, fixed seed, one at a time on
// loopback. Every response must be below 500, every error an OpenAI error object (Anthropic's on
// /v1/messages), no request may go unanswered when its framing was whole, the process must
// survive, and afterwards a normal completion must still equal the float64 oracle.
#include <chrono>
#include <fstream>
#include <map>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>

#include "tests/http/batch_support.h"
#include "tests/http/fuzz_gen.h"
#include "tests/http/socket.h"
#include "tests/http/support.h"

using namespace exspec::httptest;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

struct Outcome {
  std::vector<int> statuses;
  std::string problem;  // empty: conforming
};

// What is wrong with an error response's body, or "": OpenAI's error object, or on Anthropic's
// routes Anthropic's ({"type": "error", "error": {"type", "message"}}; a request whose head could
// not be read is answered in OpenAI's, as no route was known).
std::string error_body_problem(const std::string& body, bool anthropic) {
  json j;
  try {
    j = json::parse(body);
  } catch (const std::exception&) {
    return "the error body is not JSON";
  }
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return "no error object";
  const json& e = j["error"];
  if (!e.contains("message") || !e["message"].is_string() || e["message"].get<std::string>().empty())
    return "error.message is not a non-empty string";
  if (!e.contains("type") || !e["type"].is_string()) return "error.type is not a string";
  if (anthropic && j.value("type", "") == "error") return "";
  for (const char* k : {"param", "code"})
    if (!e.contains(k) || !(e[k].is_string() || e[k].is_null())) return std::string("error.") + k + " is missing";
  return "";
}

Outcome exchange(int port, const FuzzCase& c) {
  Outcome o;
  net::io_context ioc;
  net::ip::tcp::socket sock = connect_loopback(ioc, port, 20);
  beast::error_code ec;
  net::write(sock, net::buffer(c.bytes), ec);  // the server may answer and close before taking all
  if (!c.complete) sock.shutdown(net::ip::tcp::socket::shutdown_send, ec);
  beast::flat_buffer buf;
  while (static_cast<int>(o.statuses.size()) < c.requests) {
    bhttp::response_parser<bhttp::string_body> p;
    p.body_limit(64 << 20);
    if (c.head && o.statuses.empty()) p.skip(true);
    bhttp::read(sock, buf, p, ec);
    if (ec == bhttp::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset) {
      if (o.statuses.empty() && c.complete) o.problem = "no response to a whole request (" + ec.message() + ")";
      break;
    }
    if (ec) {
      o.problem = "reading the response: " + ec.message();
      break;
    }
    const int status = static_cast<int>(p.get().result_int());
    if (status == 100) continue;  // Expect: 100-continue; the answer follows
    o.statuses.push_back(status);
    if (status >= 500) o.problem = "status " + std::to_string(status) + ": " + p.get().body().substr(0, 300);
    else if (status >= 400 && !(c.head && o.statuses.size() == 1))
      o.problem = error_body_problem(p.get().body(), c.what.find(" /v1/messages") != std::string::npos);
    if (!o.problem.empty()) break;
  }
  return o;
}

}  // namespace

TEST_CASE("fuzz: thousands of malformed requests on every endpoint: no 5xx, OpenAI errors, still correct after") {
  const std::string cfg = scratch() + "/fuzz.json";
  // Small limits keep every generation and upload short, and make the limits' errors reachable.
  std::ofstream(cfg) << R"({"limits": {"max_tokens": 8, "default_max_tokens": 4, "max_body_bytes": 65536,
                            "max_file_bytes": 131072, "max_active_batches": 4, "max_batch_lines": 8}})";
  ServerProcess s({"--data-dir", data_dir("fuzz"), "--config", cfg});
  const int port = s.port();
  const Lines fixture = completion_lines(2, 4);
  const std::string fid = upload(port, fixture.jsonl)["id"];
  const std::string bid = create_batch(port, fid)["id"];

  constexpr int kCases = 10000;
  constexpr double kBudgetS = 50;  // stop early rather than run past CI's patience; at least 2000 must run
  FuzzGen gen(19, fid, bid);
  std::map<int, int> by_status;
  int sent = 0, unanswered = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (; sent < kCases; ++sent) {
    const FuzzCase c = gen.next();
    const Outcome o = exchange(port, c);
    for (int st : o.statuses) ++by_status[st];
    if (o.statuses.empty()) ++unanswered;
    if (!o.problem.empty()) {
      INFO("case " << sent << ": " << c.what << "\nrequest (first 600 bytes):\n" << c.bytes.substr(0, 600));
      FAIL_CHECK(o.problem);
    }
    REQUIRE(s.alive());
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > kBudgetS) break;
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string summary;
  for (const auto& [st, n] : by_status) summary += " " + std::to_string(st) + ":" + std::to_string(n);
  INFO("fuzz: " << sent << " cases in " << took << " s; statuses" << summary << "; unanswered " << unanswered);
  CHECK(sent >= 2000);
  CHECK(by_status.count(200) > 0);  // some mutations stay valid: the happy paths were crossed too
  CHECK(by_status[400] > 1000);
  WARN("fuzz: " << sent << " cases in " << took << " s; statuses" << summary << "; unanswered " << unanswered);

  // Still serving, and still right.
  REQUIRE(s.alive());
  CHECK(request(port, "GET", "/health").status == 200);
  const auto prompt = bytes_of("After the storm");
  const json r = post(port, "/v1/completions", {{"model", "target"}, {"prompt", prompt}, {"max_tokens", 8},
                                                {"return_token_ids", true}}).json_body();
  CHECK(r["choices"][0]["token_ids"].get<std::vector<int64_t>>() == oracle({prompt}, 8)[0].ids);
}
