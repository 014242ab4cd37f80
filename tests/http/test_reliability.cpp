// Faults and hostile input against real `exspec serve` processes (issue 19): a batch input file
// that vanished before a restart, a data directory moved after kill -9, uploads above the request
// body limit, header injection through file names, file-descriptor exhaustion, HTTP/1.0
// streaming, and /metrics without paths. Each case failed on the code before its fix.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include "tests/http/batch_support.h"
#include "tests/http/support.h"

using namespace exspec::httptest;
namespace fs = std::filesystem;
namespace net = boost::asio;

namespace {

// Starts a batch of n lines, waits until at least two are answered, then kill -9s the server.
// Returns the batch id; `at_kill` gets the answered count seen just before the kill.
std::string batch_then_kill(const std::string& dir, const Lines& l, std::string* file_id, int64_t* at_kill) {
  ServerProcess s({"--data-dir", dir});
  const int port = s.port();
  *file_id = upload(port, l.jsonl)["id"];
  const std::string id = create_batch(port, *file_id)["id"];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    *at_kill = get_batch(port, id)["request_counts"]["completed"];
    if (*at_kill >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  s.signal(SIGKILL);
  REQUIRE(s.wait_exit(20) == 128 + SIGKILL);
  REQUIRE(*at_kill >= 2);
  return id;
}

std::string head_of(const std::string& raw) { return raw.substr(0, raw.find("\r\n\r\n")); }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

TEST_CASE("reliability: a batch whose input file vanished before a restart ends failed, says why, and keeps its answers") {
  const std::string dir = data_dir("vanished");
  const Lines l = completion_lines(32, 32);
  std::string fid;
  int64_t at_kill = 0;
  const std::string id = batch_then_kill(dir, l, &fid, &at_kill);
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "files")) fs::remove(e.path());  // files/ emptied

  ServerProcess s({"--data-dir", dir});
  const json b = wait_final(s.port(), id, 60);
  INFO(b.dump());
  REQUIRE(b["status"] == "failed");  // never "completed" with lines unanswered
  const int64_t done = b["request_counts"]["completed"];
  CHECK(done >= at_kill);
  CHECK(done < 32);
  CHECK(b["failed_at"].is_number());
  const json& err = b["errors"]["data"][0];
  CHECK(err["code"] == "file_content_missing");
  CHECK(err["param"] == "input_file_id");
  CHECK(err["message"].get<std::string>().find(fid) != std::string::npos);
  CHECK(err["message"].get<std::string>().find(std::to_string(32 - done) + " lines") != std::string::npos);
  CHECK(err["message"].get<std::string>().find(dir) == std::string::npos);  // never the server's paths
  // Downloading the lost content: a server error naming the file id only; the log has the path.
  HttpResult gone = request(s.port(), "GET", "/v1/files/" + fid + "/content");
  CHECK(gone.status == 500);
  CHECK(gone.json_body()["error"]["code"] == "file_content_missing");
  CHECK(gone.body.find(fid) != std::string::npos);
  CHECK(gone.body.find(dir) == std::string::npos);
  CHECK(s.log().find(fs::path(dir).filename().string() + "/files/" + fid) != std::string::npos);
  // What was answered before the kill is still delivered, each line once.
  const auto out = download(s.port(), b["output_file_id"]);
  CHECK(static_cast<int64_t>(out.size()) == done);
  const auto seen = check_outputs(out, oracle(l.prompts, 32));
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == seen.size());
}

TEST_CASE("reliability: a batch past its completion window ends expired, keeping what was answered") {
  const std::string dir = data_dir("expiry");
  const std::string cfg = dir + "-config.json";
  std::ofstream(cfg) << R"({"limits": {"batch_window_s": 3}})";  // "24h" lasts 3 s here
  ServerProcess s({"--data-dir", dir, "--config", cfg});
  // 800 lines of 160 tokens: far more than 3 s of work, while the first lines finish within it.
  const int n = 800;
  const int64_t max_tokens = 160;
  const Lines l = completion_lines(n, max_tokens);
  const json created = create_batch(s.port(), upload(s.port(), l.jsonl)["id"]);
  CHECK(created["expires_at"].get<int64_t>() - created["created_at"].get<int64_t>() == 3);
  const json b = wait_final(s.port(), created["id"], 120);
  INFO(b.dump());
  REQUIRE(b["status"] == "expired");
  CHECK(b["expired_at"].is_number());
  const int64_t done = b["request_counts"]["completed"], failed = b["request_counts"]["failed"];
  CHECK(done > 0);
  CHECK(done < n);
  CHECK(done + failed == n);
  // The answered lines stay in the output file (each equal to the oracle), the rest are in the
  // error file as batch_expired: every line exactly once in one of them.
  const auto out = download(s.port(), b["output_file_id"]);
  CHECK(static_cast<int64_t>(out.size()) == done);
  std::vector<size_t> answered;
  for (const json& o : out) answered.push_back(std::stoul(o["custom_id"].get<std::string>().substr(4)));
  std::vector<std::vector<int64_t>> asked;
  for (size_t i : answered) asked.push_back(l.prompts[i]);
  const auto got = oracle(asked, max_tokens);  // only for the answered lines: the rest never ran
  std::vector<OracleOut> want(n);
  for (size_t k = 0; k < answered.size(); ++k) want[answered[k]] = got[k];
  const auto seen = check_outputs(out, want);
  std::set<std::string> all(seen.begin(), seen.end());
  const auto err = download(s.port(), b["error_file_id"]);
  CHECK(static_cast<int64_t>(err.size()) == failed);
  for (const json& e : err) {
    CHECK(e["error"]["code"] == "batch_expired");
    CHECK(e["response"].is_null());
    all.insert(e["custom_id"].get<std::string>());
  }
  CHECK(all.size() == static_cast<size_t>(n));
  CHECK(s.log().find("completion window 24h passed") != std::string::npos);
}

TEST_CASE("reliability: a data directory moved after kill -9 serves its files and finishes its batch") {
  const std::string dir = data_dir("before-move"), moved = data_dir("after-move");
  const Lines l = completion_lines(32, 32);
  std::string fid;
  int64_t at_kill = 0;
  const std::string id = batch_then_kill(dir, l, &fid, &at_kill);
  fs::rename(dir, moved);

  ServerProcess s({"--data-dir", moved});
  HttpResult in = request(s.port(), "GET", "/v1/files/" + fid + "/content");
  CHECK(in.status == 200);
  CHECK(in.body == l.jsonl);
  const json b = wait_final(s.port(), id, 120);
  INFO(b.dump());
  REQUIRE(b["status"] == "completed");
  CHECK(b["request_counts"] == json{{"total", 32}, {"completed", 32}, {"failed", 0}});
  const auto out = download(s.port(), b["output_file_id"]);
  const auto seen = check_outputs(out, oracle(l.prompts, 32));
  CHECK(out.size() == 32);
  for (int i = 0; i < 32; ++i) CHECK(seen.count("req-" + std::to_string(i)) == 1);
}

TEST_CASE("reliability: an upload above max_body_bytes but within max_file_bytes is accepted with Content-Length") {
  ServerProcess s({"--data-dir", data_dir("big-upload")});
  std::string content;
  const Lines l = completion_lines(1, 4);
  while (content.size() < (3u << 19)) content += l.jsonl;  // 1.5 MiB, sent with Content-Length
  const json f = upload(s.port(), content);
  CHECK(f["bytes"] == content.size());
  CHECK(request(s.port(), "GET", "/v1/files/" + f["id"].get<std::string>() + "/content").body == content);
  // Ordinary requests keep their 1 MiB limit, announced by Content-Length or not.
  HttpResult big = post(s.port(), "/v1/completions", {{"model", "target"}, {"prompt", std::string(1100000, 'a')}});
  CHECK(big.status == 413);
  CHECK(big.json_body()["error"]["code"] == "request_too_large");
}

TEST_CASE("reliability: file names cannot inject response headers on download") {
  ServerProcess s({"--data-dir", data_dir("names")});
  const std::string names[] = {"a\nSet-Cookie: x=1", "b\rSet-Cookie: y=2", std::string("nul\0Set-Cookie: z=3", 19),
                               "quo\\\"te.jsonl", "caf\xc3\xa9 \xe2\x82\xac.jsonl"};
  const std::string stored[] = {"a\nSet-Cookie: x=1", "b\rSet-Cookie: y=2", std::string("nul\0Set-Cookie: z=3", 19),
                                "quo\"te.jsonl", "caf\xc3\xa9 \xe2\x82\xac.jsonl"};
  for (size_t i = 0; i < 5; ++i) {
    INFO("file name #" << i);
    const json f = upload(s.port(), "{}\n", "batch", names[i]);
    CHECK(f["filename"] == stored[i]);  // kept as given in the JSON API
    const std::string raw = raw_exchange(s.port(), "GET /v1/files/" + f["id"].get<std::string>() +
                                                       "/content HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string head = head_of(raw);
    INFO(head);
    CHECK(head.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(lower(head).find("\r\nset-cookie") == std::string::npos);
    size_t stray = 0;  // control bytes other than the CRLF that ends each header line
    for (size_t k = 0; k < head.size(); ++k) {
      const unsigned char c = static_cast<unsigned char>(head[k]);
      const bool crlf = (c == '\r' && head.substr(k, 2) == "\r\n") || (c == '\n' && k > 0 && head[k - 1] == '\r');
      if ((c < 0x20 || c == 0x7f) && !crlf) ++stray;
    }
    CHECK(stray == 0);
    const auto at = lower(head).find("\r\ncontent-disposition: ");
    REQUIRE(at != std::string::npos);
    const std::string cd = head.substr(at + 23, head.find("\r\n", at + 2) - at - 23);
    CHECK(cd.rfind("attachment; filename=\"", 0) == 0);
    // The quoted filename ends at the first unescaped quote, and a filename* carries the name exactly.
    size_t q = 22;
    while (q < cd.size() && cd[q] != '"') q += cd[q] == '\\' ? 2 : 1;
    const std::string star = "\"; filename*=UTF-8''";
    CHECK(cd.substr(q, star.size()) == star);
    std::string decoded;
    for (size_t k = q + star.size(); k < cd.size(); ++k) {
      if (cd[k] == '%' && k + 2 < cd.size() + 1) {
        decoded += static_cast<char>(std::stoi(cd.substr(k + 1, 2), nullptr, 16));
        k += 2;
      } else {
        decoded += cd[k];
      }
    }
    CHECK(decoded == stored[i]);
  }
}

TEST_CASE("reliability: at the connection cap new connections get a quick 503 and open ones keep working") {
  ServerProcess s({}, true, 128);  // 128 file descriptors: the cap is derived from them
  CHECK(s.log().find("limits.max_connections") != std::string::npos);
  net::io_context ioc;
  std::vector<net::ip::tcp::socket> idle;
  for (int i = 0; i < 200; ++i) {
    idle.emplace_back(ioc);
    idle.back().connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(s.port())));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double cpu0 = cpu_seconds(s.pid());
  HttpResult h = request(s.port(), "GET", "/health", "", {}, 10);  // answered, not left hanging
  CHECK(h.status == 503);
  CHECK(h.json_body()["error"]["code"] == "too_many_connections");
  CHECK(h.headers["connection"] == "close");
  // The first connection was accepted before the cap: it is served.
  const std::string got = [&] {
    std::string req = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    boost::system::error_code ec;
    net::write(idle.front(), net::buffer(req), ec);
    timeval tv{10, 0};
    setsockopt(idle.front().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string out;
    char buf[4096];
    while (!ec) out.append(buf, idle.front().read_some(net::buffer(buf), ec));
    return out;
  }();
  CHECK(got.rfind("HTTP/1.1 200", 0) == 0);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  CHECK(cpu_seconds(s.pid()) - cpu0 < 0.5);  // nothing spins while the connections sit there
  CHECK(s.log().find("connection limit reached") != std::string::npos);
  idle.clear();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(request(s.port(), "GET", "/health", "", {}, 10).status == 200);
  // Refusals are counted (the /health above was one).
  CHECK(metric(s.port(), "exspec_http_connections_refused_total") >= 1);
}

TEST_CASE("reliability: out of file descriptors the accept loop backs off instead of spinning") {
  ServerProcess s({"--max-connections", "100000"}, true, 128);
  net::io_context ioc;
  std::vector<net::ip::tcp::socket> idle;
  for (int i = 0; i < 200; ++i) {  // more than the process may open: the kernel queues the rest
    idle.emplace_back(ioc);
    idle.back().connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(s.port())));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double cpu0 = cpu_seconds(s.pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double used = cpu_seconds(s.pid()) - cpu0;
  INFO(s.log());
  CHECK(used < 0.5);  // a spinning accept loop burns a whole core: about 2 s here
  CHECK(s.log().find("out of file descriptors") != std::string::npos);
  idle.clear();  // the server's side of them ends on read errors; accepting resumes
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int status = 0;
  while (status != 200 && std::chrono::steady_clock::now() < deadline) {
    try {
      status = request(s.port(), "GET", "/health", "", {}, 5).status;
    } catch (const std::exception&) {
    }
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(status == 200);
}

TEST_CASE("reliability: HTTP/1.0 streaming is close-delimited, not chunked") {
  const int port = shared_server().port();
  const json body{{"model", "target"}, {"prompt", "Old clients"}, {"max_tokens", 12}, {"stream", true}};
  const std::string b = body.dump();
  const std::string raw = raw_exchange(port, "POST /v1/completions HTTP/1.0\r\nHost: x\r\nContent-Type: "
                                             "application/json\r\nContent-Length: " + std::to_string(b.size()) +
                                             "\r\n\r\n" + b, 30, /*keep_open=*/true);
  const std::string head = head_of(raw);
  INFO(raw);
  CHECK(head.rfind("HTTP/1.0 200", 0) == 0);
  CHECK(lower(head).find("transfer-encoding") == std::string::npos);
  CHECK(lower(head).find("content-length") == std::string::npos);
  CHECK(lower(head).find("content-type: text/event-stream") != std::string::npos);
  bool done = false;
  const auto events = sse_events(raw.substr(head.size() + 4), &done);
  CHECK(done);
  std::string streamed;
  for (const auto& e : events) streamed += e["choices"][0]["text"].get<std::string>();
  json plain = body;
  plain.erase("stream");
  CHECK(streamed == post(port, "/v1/completions", plain).json_body()["choices"][0]["text"]);
}

TEST_CASE("reliability: /metrics names the served model, never its directory") {
  const std::string m = request(shared_server().port(), "GET", "/metrics").body;
  CHECK(m.find("model=\"target\"") != std::string::npos);
  CHECK(m.find(models().target) == std::string::npos);
  CHECK(m.find(scratch()) == std::string::npos);
}
