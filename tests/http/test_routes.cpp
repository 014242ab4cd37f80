// The route table (http/routes.cpp) and its target matching (http/route_match.h, Boost.URL):
// patterns, queries, body limits, the docs' endpoint lists; then 404 and 405 with Allow on a
// real server.
#include <fstream>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "http/route_match.h"
#include "http/routes.h"
#include "tests/http/support.h"

using namespace exspec::http;
namespace bhttp = boost::beast::http;

namespace {

// A path the pattern matches: each {name} written as a value.
std::string sample_path(const std::string& pattern) {
  std::string out = pattern_label(pattern);
  for (size_t a; (a = out.find('{')) != std::string::npos;) out.replace(a, out.find('}', a) - a + 1, "x1");
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("routes: targets in origin and absolute form, path segments and query decoded") {
  auto t = parse_target("/v1/batches?limit=5&after=batch%5F1&limit=7&flag");
  REQUIRE(t);
  CHECK(t->path == "/v1/batches");
  CHECK(t->segments == std::vector<std::string>{"v1", "batches"});
  CHECK(t->param("limit") == "5");  // the first one
  CHECK(t->param("after") == "batch_1");
  CHECK(t->param("flag").empty());
  CHECK(t->param("none").empty());
  t = parse_target("http://127.0.0.1:8000/v1/models/my%20model");
  REQUIRE(t);
  CHECK(t->segments == std::vector<std::string>{"v1", "models", "my model"});
  CHECK_FALSE(parse_target("*"));
  CHECK_FALSE(parse_target("v1/models"));
}

TEST_CASE("routes: a {name} is one segment, a last {name...} the rest of the path") {
  std::vector<std::string> params;
  auto segs = [](const std::string& path) { return parse_target(path)->segments; };
  CHECK(match_pattern("/v1/files/{id}/content", segs("/v1/files/file-1/content"), params));
  CHECK(params == std::vector<std::string>{"file-1"});
  CHECK_FALSE(match_pattern("/v1/files/{id}", segs("/v1/files/a/b"), params));
  CHECK_FALSE(match_pattern("/v1/files/{id}", segs("/v1/files/"), params));
  CHECK_FALSE(match_pattern("/v1/files/{id}", segs("/v1/files"), params));
  CHECK(match_pattern("/v1/models/{id...}", segs("/v1/models/models/demo"), params));
  CHECK(params == std::vector<std::string>{"models/demo"});
  CHECK_FALSE(match_pattern("/v1/models/{id...}", segs("/v1/models"), params));
  CHECK_FALSE(match_pattern("/v1/completions", segs("/v1/completions/"), params));
  CHECK(pattern_label("/v1/models/{id...}") == "/v1/models/{id}");
}

TEST_CASE("routes: each route's path reaches its own pattern only, and one row per method and pattern") {
  std::set<std::string> rows;
  for (const Route& r : route_table()) {
    const std::string path = sample_path(r.pattern);
    INFO(r.pattern << " " << path);
    CHECK(rows.insert(std::string(bhttp::to_string(r.method)) + " " + r.pattern).second);
    std::vector<std::string> params;
    for (const Route& other : route_table())
      CHECK(match_pattern(other.pattern, parse_target(path)->segments, params) == (std::string(other.pattern) == r.pattern));
  }
}

TEST_CASE("routes: the docs name every route") {
  const std::string docs = slurp(HTTP_TEST_DIR "/../../docs/serving.md") + slurp(HTTP_TEST_DIR "/../../docs/batch-jobs.md");
  for (const Route& r : route_table()) {
    const std::string name = "`" + std::string(bhttp::to_string(r.method)) + " " + pattern_label(r.pattern) + "`";
    INFO(name);
    CHECK(docs.find(name) != std::string::npos);
  }
}

TEST_CASE("routes: uploads get the file limit, decided from the head") {
  exspec::Limits lim;
  lim.max_body_bytes = 1000;
  lim.max_file_bytes = 5000;
  auto limit = [&](bhttp::verb v, const std::string& target) { return body_limit_for(lim, Request{v, target, 11}); };
  CHECK(limit(bhttp::verb::post, "/v1/files") == 5000);
  CHECK(limit(bhttp::verb::post, "/v1/files?purpose=batch") == 5000);
  CHECK(limit(bhttp::verb::post, "http://127.0.0.1/v1/files") == 5000);
  CHECK(limit(bhttp::verb::get, "/v1/files") == 1000);
  CHECK(limit(bhttp::verb::post, "/v1/completions") == 1000);
  CHECK(limit(bhttp::verb::post, "/v1/files/x1") == 1000);
  CHECK(limit(bhttp::verb::post, "*") == 1000);
}

TEST_CASE("routes: a known path with another method is a 405 with Allow, an unknown path a 404 naming the routes") {
  using namespace exspec::httptest;
  const int port = shared_server().port();
  auto r = request(port, "GET", "/v1/completions");
  CHECK(r.status == 405);
  CHECK(r.headers["allow"] == "POST");
  CHECK(r.json_body()["error"]["code"] == "method_not_allowed");
  r = request(port, "DELETE", "/v1/models");
  CHECK(r.status == 405);
  CHECK(r.headers["allow"] == "GET, HEAD");
  r = request(port, "PUT", "/v1/files");  // the path is known before the data directory is asked for
  CHECK(r.status == 405);
  CHECK(r.headers["allow"] == "GET, HEAD, POST");
  r = request(port, "GET", "/v1/nothing?x=1");
  CHECK(r.status == 404);
  const std::string message = r.json_body()["error"]["message"];
  CHECK_THAT(message, Catch::Contains("no such endpoint: GET /v1/nothing ("));
  CHECK_THAT(message, Catch::Contains("POST /v1/chat/completions"));
  CHECK_THAT(message, Catch::Contains("GET /v1/files/{id}/content"));
  // Absolute form (RFC 9112 3.2.2) and percent-encoded segments reach the same route.
  CHECK(request(port, "GET", "http://127.0.0.1/v1/models").status == 200);
  const std::string name = request(port, "GET", "/v1/models").json_body()["data"][0]["id"];
  std::string encoded;
  for (char ch : name) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(ch));
    encoded += hex;
  }
  CHECK(request(port, "GET", "/v1/models/" + encoded).json_body()["id"] == name);
  // HEAD: a GET route's head, without its body.
  const std::string head = raw_exchange(port, "HEAD /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  CHECK(head.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(head.size() == head.find("\r\n\r\n") + 4);
}
