// Pieces of http/ without a server: stop strings over streamed text, JSON bodies, safe text.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "http/api_error.h"
#include "http/json_body.h"
#include "http/safe_text.h"
#include "http/stop_scanner.h"
#include "model/tools/make_model.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/http/support.h"

using namespace exspec::http;

TEST_CASE("stop scanner: holds back possible starts, trims the stop string, any split") {
  const std::string text = "Hello world. END and more";
  for (size_t split = 1; split < text.size(); ++split) {
    StopScanner s({"END", "xyz"});
    std::string out;
    for (size_t i = 0; i < text.size(); i += split) out += s.feed(text.substr(i, split));
    out += s.finish();
    CHECK(out == "Hello world. ");
    CHECK(s.stopped());
  }
  StopScanner none({"zz"});
  CHECK(none.feed("abz") == "ab");  // "z" may start "zz"
  CHECK(none.feed("a") == "za");
  CHECK(none.feed("z") == "");
  CHECK(none.finish() == "z");
  CHECK_FALSE(none.stopped());
  StopScanner earliest({"b", "abc"});
  CHECK(earliest.feed("xabc") == "x");  // "abc" starts first
}

TEST_CASE("safe text: Content-Disposition cannot be broken out of") {
  using exspec::http::content_disposition;
  CHECK(content_disposition("a.jsonl") == "attachment; filename=\"a.jsonl\"; filename*=UTF-8''a.jsonl");
  CHECK(content_disposition(std::string("a\r\nSet-Cookie: x\0\"\\", 19)) ==
        "attachment; filename=\"a__Set-Cookie: x___\"; filename*=UTF-8''a%0D%0ASet-Cookie%3A%20x%00%22%5C");
  CHECK(content_disposition("caf\xc3\xa9") == "attachment; filename=\"caf__\"; filename*=UTF-8''caf%C3%A9");
}

TEST_CASE("safe text: the API key compare") {
  using exspec::http::constant_time_equal;
  CHECK(constant_time_equal("Bearer k", "Bearer k"));
  CHECK_FALSE(constant_time_equal("Bearer k", "Bearer j"));
  CHECK_FALSE(constant_time_equal("Bearer k", "Bearer kk"));
  CHECK_FALSE(constant_time_equal("", "x"));
  CHECK(constant_time_equal("", ""));
}

TEST_CASE("json bodies: any parse failure names where it stopped") {
  using exspec::http::ApiError;
  using exspec::http::parse_json_body;
  auto param_of = [](const std::string& text) {
    try {
      parse_json_body(text);
    } catch (const ApiError& e) {
      CHECK(e.status() == 400);
      CHECK(e.code() == "invalid_json");
      return e.param();
    }
    return std::string("(parsed)");
  };
  CHECK(param_of(R"({"max_tokens":1e999})") == "max_tokens");
  CHECK(param_of(R"({"a":1,"messages":[{"role":"user"},{"content":[{"type":-1e999}]}]})") ==
        "messages[1].content[0].type");
  CHECK(param_of(R"({"stop":["a",)") == "stop[1]");
  CHECK(param_of("{\"x\":") == "x");
  CHECK(param_of("nope") == "");
  CHECK(param_of(std::string(65, '[') + std::string(65, ']')).rfind("[0][0]", 0) == 0);
  CHECK(param_of(std::string(64, '[') + std::string(64, ']')) == "(parsed)");
  CHECK(parse_json_body(R"({"a":[1,{"b":2}],"c":"d"})") == nlohmann::ordered_json::parse(R"({"a":[1,{"b":2}],"c":"d"})"));
  // Objects keep the client's key order (schemas, tool parameters).
  CHECK(parse_json_body(R"({"z":1,"a":{"y":2,"b":3}})").dump() == R"({"z":1,"a":{"y":2,"b":3}})");
}
