#include "tests/http/batch_support.h"

#include <chrono>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

namespace exspec::httptest {

std::string data_dir(const std::string& name) { return scratch() + "/data-" + name; }

HttpResult upload_raw(int port, const std::string& content, const std::string& purpose, const std::string& filename) {
  const std::string b = "----exspecTestBoundary7MA4YWxkTrZu0gW";
  std::string body = "--" + b + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n" + purpose + "\r\n";
  body += "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + filename + "\"\r\n";
  body += "Content-Type: application/jsonl\r\n\r\n" + content + "\r\n--" + b + "--\r\n";
  return request(port, "POST", "/v1/files", body, {{"Content-Type", "multipart/form-data; boundary=" + b}});
}

json upload(int port, const std::string& content, const std::string& purpose, const std::string& filename) {
  HttpResult r = upload_raw(port, content, purpose, filename);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json_body();
}

json create_batch(int port, const std::string& file_id, const std::string& endpoint) {
  HttpResult r = post(port, "/v1/batches",
                      {{"input_file_id", file_id}, {"endpoint", endpoint}, {"completion_window", "24h"},
                       {"metadata", {{"job", "test"}}}});
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json_body();
}

json get_batch(int port, const std::string& id) {
  HttpResult r = request(port, "GET", "/v1/batches/" + id);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json_body();
}

json wait_final(int port, const std::string& id, int timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (true) {
    json b = get_batch(port, id);
    const std::string s = b["status"];
    if (s == "completed" || s == "failed" || s == "cancelled" || s == "expired") return b;
    if (std::chrono::steady_clock::now() > deadline) FAIL("batch still " << s << " after " << timeout_s << " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<json> download(int port, const json& file_id) {
  if (file_id.is_null()) return {};
  HttpResult r = request(port, "GET", "/v1/files/" + file_id.get<std::string>() + "/content");
  REQUIRE(r.status == 200);
  std::vector<json> out;
  std::istringstream in(r.body);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

Lines completion_lines(int n, int64_t max_tokens) {
  Lines l;
  for (int i = 0; i < n; ++i) {
    std::string text = "Line " + std::to_string(i) + ":";
    for (int k = 0; k < i % 5; ++k) text += " more words";
    l.prompts.push_back(bytes_of(text));
    json line{{"custom_id", "req-" + std::to_string(i)},
              {"method", "POST"},
              {"url", "/v1/completions"},
              {"body", {{"model", "target"}, {"prompt", l.prompts.back()}, {"max_tokens", max_tokens},
                        {"return_token_ids", true}}}};
    l.jsonl += line.dump() + "\n";
  }
  return l;
}

std::multiset<std::string> check_outputs(const std::vector<json>& out, const std::vector<OracleOut>& want) {
  std::multiset<std::string> seen;
  for (const json& o : out) {
    INFO(o.dump());
    const std::string cid = o["custom_id"];
    seen.insert(cid);
    const size_t i = std::stoul(cid.substr(4));
    REQUIRE(i < want.size());
    CHECK(o["error"].is_null());
    CHECK(o["id"].get<std::string>().rfind("batch_req_", 0) == 0);
    REQUIRE(o["response"]["status_code"] == 200);
    const json& body = o["response"]["body"];
    CHECK(o["response"]["request_id"] == body["id"]);
    CHECK(body["object"] == "text_completion");
    CHECK(body["choices"][0]["token_ids"].get<std::vector<int64_t>>() == want[i].ids);
    CHECK(body["choices"][0]["finish_reason"] == want[i].finish);
  }
  return seen;
}

}  // namespace exspec::httptest
