// Connections and the server's life: keep-alive, pipelining, API key, overload (429), a client that goes
// away (its sequences are cancelled), SIGTERM (in-flight requests finish, then exit 0), and a second
// signal during the drain (exit at once). test_grammar_budget.cpp drains compiles and batch lines.
#include <csignal>
#include <fstream>
#include <future>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>

#include "tests/http/support.h"

using namespace exspec::httptest;
namespace net = boost::asio;
namespace bhttp = boost::beast::http;

namespace {
net::ip::tcp::socket connect(net::io_context& ioc, int port) {
  net::ip::tcp::socket s(ioc);
  s.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
  timeval tv{30, 0};
  setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return s;
}
}  // namespace

TEST_CASE("keep-alive: several requests on one connection") {
  net::io_context ioc;
  auto s = connect(ioc, shared_server().port());
  boost::beast::flat_buffer buf;
  for (int i = 0; i < 3; ++i) {
    bhttp::request<bhttp::string_body> req{bhttp::verb::post, "/v1/completions", 11};
    req.set(bhttp::field::host, "x");
    req.body() = json{{"model", "target"}, {"prompt", "ka " + std::to_string(i)}, {"max_tokens", 3},
                      {"stream", i == 1}}.dump();
    req.prepare_payload();
    bhttp::write(s, req);
    bhttp::response<bhttp::string_body> res;
    bhttp::read(s, buf, res);
    CHECK(res.result_int() == 200);
    CHECK(res.keep_alive());
  }
  bhttp::request<bhttp::string_body> h{bhttp::verb::get, "/health", 11};
  h.set(bhttp::field::host, "x");
  bhttp::write(s, h);
  bhttp::response<bhttp::string_body> res;
  bhttp::read(s, buf, res);
  CHECK(res.result_int() == 200);
}

TEST_CASE("pipelining: a request sent while a generation runs is answered after it, on the same connection") {
  const int port = shared_server().port();
  for (bool stream : {true, false}) {
    INFO("stream " << stream);
    const double gone_before = metric(port, "exspec_client_disconnects_total");
    net::io_context ioc;
    auto s = connect(ioc, port);
    bhttp::request<bhttp::string_body> gen{bhttp::verb::post, "/v1/completions", 11};
    gen.set(bhttp::field::host, "x");
    gen.body() = json{{"model", "target"}, {"prompt", "pipelined"}, {"max_tokens", 200}, {"stream", stream}}.dump();
    gen.prepare_payload();
    bhttp::write(s, gen);
    // The next request goes out while the engine holds the first: the read that watches for a
    // client going away receives it, and it must wait for the first response, not end it.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until && engine_holds(port) < 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    bhttp::request<bhttp::string_body> health{bhttp::verb::get, "/health", 11};
    health.set(bhttp::field::host, "x");
    bhttp::write(s, health);
    boost::beast::flat_buffer buf;
    bhttp::response<bhttp::string_body> first, second;
    bhttp::read(s, buf, first);
    CHECK(first.result_int() == 200);
    CHECK(first.body().find(stream ? "data: [DONE]" : "\"choices\"") != std::string::npos);
    bhttp::read(s, buf, second);
    CHECK(second.result_int() == 200);
    CHECK(json::parse(second.body())["status"] == "ok");
    CHECK(metric(port, "exspec_client_disconnects_total") == gone_before);
  }
}

TEST_CASE("idle timeout: a slow upload goes on while it makes progress, a stalled one is closed") {
  const std::string cfg = scratch() + "/idle-1s.json";
  std::ofstream(cfg) << R"({"limits": {"idle_timeout_s": 1}})";
  ServerProcess srv({"--config", cfg});
  const std::string body = json{{"model", "target"}, {"prompt", "a slow upload"}, {"max_tokens", 2}}.dump();
  const std::string head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  net::io_context ioc;
  {  // 2.4 s of body, a piece every 0.4 s: longer than the idle timeout, never idle that long
    auto s = connect(ioc, srv.port());
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // idle, but under the timeout
    net::write(s, net::buffer(head));
    const size_t piece = body.size() / 6 + 1;
    for (size_t at = 0; at < body.size(); at += piece) {
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      net::write(s, net::buffer(body.substr(at, piece)));
    }
    boost::beast::flat_buffer buf;
    bhttp::response<bhttp::string_body> res;
    bhttp::read(s, buf, res);
    CHECK(res.result_int() == 200);
  }
  {  // the head, then nothing for longer than the timeout: closed, nothing answered
    auto s = connect(ioc, srv.port());
    net::write(s, net::buffer(head));
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    boost::beast::error_code ec;
    char c;
    const size_t n = s.read_some(net::buffer(&c, 1), ec);
    CHECK(n == 0);
    CHECK(ec == net::error::eof);
  }
}

TEST_CASE("api key: Authorization Bearer is required when configured") {
  ServerProcess srv({"--api-key", "sekrit"});
  const json body{{"model", "target"}, {"prompt", "Hi"}, {"max_tokens", 2}};
  HttpResult none = post(srv.port(), "/v1/completions", body);
  CHECK(none.status == 401);
  CHECK(none.json_body()["error"]["code"] == "invalid_api_key");
  HttpResult wrong = request(srv.port(), "POST", "/v1/completions", body.dump(), {{"Authorization", "Bearer nope"}});
  CHECK(wrong.status == 401);
  HttpResult right = request(srv.port(), "POST", "/v1/completions", body.dump(), {{"Authorization", "Bearer sekrit"}});
  CHECK(right.status == 200);
  CHECK(request(srv.port(), "GET", "/v1/models").status == 401);
  CHECK(request(srv.port(), "GET", "/health").status == 200);
}

TEST_CASE("overload: beyond the engine's queue a request gets 429 and nothing is left behind") {
  ServerProcess srv({"--max-queue", "2", "--batch", "1", "--window", "1", "--mode", "nonspec"});
  std::vector<std::vector<int64_t>> many(48, std::vector<int64_t>{256, 65, 66});
  HttpResult r = post(srv.port(), "/v1/completions", {{"model", "target"}, {"prompt", many}, {"max_tokens", 64}});
  INFO(r.body);
  CHECK(r.status == 429);
  CHECK(r.json_body()["error"]["type"] == "rate_limit_error");
  // What had been submitted was cancelled: the engine empties, and the server still serves.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto now_left = metrics(srv.port(), {"exspec_active_sequences", "exspec_queue_depth"});
  while (std::chrono::steady_clock::now() < deadline && now_left != std::vector<double>{0.0, 0.0}) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    now_left = metrics(srv.port(), {"exspec_active_sequences", "exspec_queue_depth"});
  }
  CHECK(now_left[0] == 0);  // active
  CHECK(now_left[1] == 0);  // queued
  CHECK(post(srv.port(), "/v1/completions", {{"model", "target"}, {"prompt", "ok"}, {"max_tokens", 2}}).status == 200);
}

TEST_CASE("a client that disconnects cancels its sequences") {
  ServerProcess srv;
  for (bool stream : {true, false}) {
    INFO("stream " << stream);
    const double before = metric(srv.port(), "exspec_sequences_cancelled_total");
    {
      net::io_context ioc;
      auto s = connect(ioc, srv.port());
      bhttp::request<bhttp::string_body> req{bhttp::verb::post, "/v1/completions", 11};
      req.set(bhttp::field::host, "x");
      req.body() = json{{"model", "target"}, {"prompt", "long"}, {"max_tokens", 480}, {"stream", stream}}.dump();
      req.prepare_payload();
      bhttp::write(s, req);
      if (stream) {  // wait for the first bytes, then hang up
        char c;
        REQUIRE(s.read_some(net::buffer(&c, 1)) == 1);
      } else {  // hang up once the engine holds the sequence (a fixed sleep raced a loaded machine)
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < until && engine_holds(srv.port()) < 1)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        REQUIRE(engine_holds(srv.port()) >= 1);
      }
      s.close();
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline &&
           metric(srv.port(), "exspec_sequences_cancelled_total") < before + 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(metric(srv.port(), "exspec_sequences_cancelled_total") >= before + 1);
    CHECK(metric(srv.port(), "exspec_active_sequences") == 0);
  }
  CHECK(metric(srv.port(), "exspec_client_disconnects_total") == 2);
  CHECK(post(srv.port(), "/v1/completions", {{"model", "target"}, {"prompt", "ok"}, {"max_tokens", 2}}).status == 200);
}

TEST_CASE("SIGTERM drains: the in-flight request completes exactly, then the server exits 0") {
  ServerProcess srv;
  const std::string prompt = "Drain me";
  const auto want = oracle({bytes_of(prompt)}, 120)[0];
  auto pending = std::async(std::launch::async, [&] {
    return post(srv.port(), "/v1/completions",
                {{"model", "target"}, {"prompt", prompt}, {"max_tokens", 120}, {"return_token_ids", true}}, 120);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline && metric(srv.port(), "exspec_requests_in_flight") < 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  srv.signal(SIGTERM);
  HttpResult r = pending.get();
  INFO(r.body << "\nserver log:\n" << srv.log());
  REQUIRE(r.status == 200);
  CHECK(r.json_body()["choices"][0]["token_ids"].get<std::vector<int64_t>>() == want.ids);
  CHECK(r.headers["connection"] == "close");  // the server closes it after this response: it says so
  CHECK(srv.wait_exit(30) == 0);
  CHECK(srv.log().find("draining") != std::string::npos);
}

TEST_CASE("shutdown: SIGINT drains, a second signal (SIGTERM) exits at once with 128 + SIGTERM, cutting the streams") {
  ServerProcess srv({"--shutdown-drain", "60"});
  const int port = srv.port();
  std::vector<std::future<std::string>> streams;
  for (int i = 0; i < 8; ++i)
    streams.push_back(std::async(std::launch::async, [port, i] {
      try {
        return post(port, "/v1/completions",
                    {{"model", "target"}, {"prompt", "cut " + std::to_string(i)}, {"max_tokens", 480}, {"stream", true}}, 60)
            .body;
      } catch (const std::exception&) {
        return std::string();  // the connection was cut before the response's head
      }
    }));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline && metric(port, "exspec_requests_in_flight") < 8)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(metric(port, "exspec_requests_in_flight") == 8);
  srv.signal(SIGINT);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline && srv.log().find("draining") == std::string::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  INFO("server log:\n" << srv.log());
  REQUIRE(srv.log().find("draining") != std::string::npos);
  // Draining with every stream still running (a 60 s drain would let them finish).
  for (auto& s : streams) REQUIRE(s.wait_for(std::chrono::seconds(0)) != std::future_status::ready);
  REQUIRE(srv.alive());
  srv.signal(SIGTERM);
  CHECK(srv.wait_exit(5) == 128 + SIGTERM);  // the second signal's status, not the first's
  CHECK(srv.log().find("signal " + std::to_string(SIGTERM) + " again: exiting now") != std::string::npos);
  // Cut, not finished: the exit did not wait for the drain.
  for (auto& s : streams) CHECK(s.get().find("data: [DONE]") == std::string::npos);
}
