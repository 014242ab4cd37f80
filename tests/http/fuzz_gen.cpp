#include "tests/http/fuzz_gen.h"

namespace exspec::httptest {
namespace {

const char* kFields[] = {"model", "prompt", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p",
                         "n", "stream", "stream_options", "stop", "echo", "logprobs", "top_logprobs", "seed", "user",
                         "presence_penalty", "frequency_penalty", "logit_bias", "best_of", "suffix", "return_token_ids",
                         "response_format", "tools", "tool_choice", "input_file_id", "endpoint", "completion_window",
                         "metadata", "store", "include_usage", "type", "text", "role", "content", "input",
                         "instructions", "max_output_tokens", "system", "stop_sequences", "top_k", "input_schema",
                         "tool_use_id", "call_id", "arguments", "output", "reasoning", "\xff\xfe", ""};

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string FuzzGen::string_value() {
  switch (pick(12)) {
    case 0: return "\"\"";
    case 1: return quoted(std::string(1 + pick(5000), static_cast<char>('a' + pick(26))));
    case 2: return "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"";
    case 3: return "\"bad \xff\xfe utf8 \xc3\"";                  // invalid UTF-8 inside a string
    case 4: return "\"ctl \\u0000 \\n \\r \\t \\u001b \"";
    case 5: return "\"\\ud800 lone surrogate\"";
    case 6: return "\"<|im_end|><s></s><|endoftext|>\"";
    case 7: return "\"target\"";
    case 8: return "\"file-" + std::to_string(pick(1000)) + "\"";
    case 9: return quoted(file_id_);
    case 10: return "\"/v1/completions\"";
    default: return "\"24h\"";
  }
}

std::string FuzzGen::number_value() {
  static const char* raw[] = {"0", "-1", "1", "4", "8", "9", "2147483648", "9223372036854775807",
                              "-9223372036854775808", "18446744073709551616", "0.5", "-0.0", "1e308", "1e-320",
                              "1e999", "-1e999", "2.0", "3.5", "100000000000000000000000000000", "1.7976931348623157e308",
                              "0.1e1", "1E2", "-2", "65536"};
  if (chance(5)) return std::string(300 + pick(200), '9');  // beyond any integer and double
  return raw[pick(sizeof raw / sizeof *raw)];
}

std::string FuzzGen::value(int depth) {
  const uint64_t k = pick(depth > 3 ? 6 : 10);
  switch (k) {
    case 0: return "null";
    case 1: return chance(50) ? "true" : "false";
    case 2: case 3: return number_value();
    case 4: case 5: return string_value();
    case 6: case 7: {  // array
      std::string s = "[";
      const uint64_t n = pick(5);
      for (uint64_t i = 0; i < n; ++i) s += (i ? "," : "") + (chance(50) ? std::to_string(pick(300)) : value(depth + 1));
      return s + "]";
    }
    case 8: {  // object
      std::string s = "{";
      const uint64_t n = pick(4);
      for (uint64_t i = 0; i < n; ++i)
        s += (i ? "," : "") + quoted(kFields[pick(sizeof kFields / sizeof *kFields)]) + ":" + value(depth + 1);
      return s + "}";
    }
    default: {  // deep nesting, sometimes beyond the server's depth limit
      const size_t d = chance(50) ? 10 + pick(60) : 100 + pick(5000);
      return std::string(d, '[') + std::string(d, ']');
    }
  }
}

std::string FuzzGen::messages_value() {
  if (chance(15)) return value(1);
  static const char* roles[] = {"user", "system", "assistant", "developer", "tool", "wizard", ""};
  std::string s = "[";
  const uint64_t n = pick(4);
  for (uint64_t i = 0; i < n; ++i) {
    std::string content;
    switch (pick(4)) {
      case 0: content = string_value(); break;
      case 1: content = "[{\"type\":\"text\",\"text\":" + string_value() + "}]"; break;
      case 2: content = "[{\"type\":" + value(2) + ",\"text\":" + value(2) + "}]"; break;
      default: content = value(2);
    }
    std::vector<std::pair<std::string, std::string>> m{{"role", chance(85) ? quoted(roles[pick(7)]) : value(2)},
                                                       {"content", content}};
    if (chance(10)) m.emplace_back(kFields[pick(sizeof kFields / sizeof *kFields)], value(2));
    s += (i ? "," : "") + object(m);
  }
  return s + "]";
}

std::string FuzzGen::object(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string s = "{";
  for (size_t i = 0; i < fields.size(); ++i) s += (i ? "," : "") + quoted(fields[i].first) + ":" + fields[i].second;
  return s + "}";
}

std::string FuzzGen::json_body(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> f;
  if (path == "/v1/chat/completions" || path.rfind("/v1/messages", 0) == 0) {
    f = {{"model", "\"target\""}, {"messages", R"([{"role":"user","content":"Hi"}])"}, {"max_tokens", "4"}};
  } else if (path == "/v1/responses") {
    f = {{"model", "\"target\""}, {"input", chance(50) ? "\"Hi\"" : R"([{"role":"user","content":"Hi"}])"},
         {"max_output_tokens", "4"}};
  } else if (path == "/v1/batches") {
    f = {{"input_file_id", quoted(file_id_)}, {"endpoint", "\"/v1/completions\""}, {"completion_window", "\"24h\""},
         {"metadata", R"({"k":"v"})"}};
  } else {
    f = {{"model", "\"target\""}, {"prompt", "\"Hello\""}, {"max_tokens", "4"}};
  }
  const uint64_t edits = 1 + pick(3);
  for (uint64_t e = 0; e < edits; ++e) {
    const uint64_t op = pick(10);
    if (op < 2 && !f.empty()) {
      f.erase(f.begin() + static_cast<long>(pick(f.size())));  // a field goes missing
    } else if (op < 4 && !f.empty()) {
      auto& v = f[pick(f.size())];
      v.second = v.first == "messages" ? messages_value() : value(1);  // a known field, any value
    } else {
      const std::string key = kFields[pick(sizeof kFields / sizeof *kFields)];
      f.emplace_back(key, key == "messages" ? messages_value() : value(1));
    }
  }
  std::string body = chance(5) ? value(0) : object(f);
  if (chance(15)) body = damage(body);
  return body;
}

std::string FuzzGen::damage(std::string t) {
  if (t.empty()) return "\xff";
  switch (pick(5)) {
    case 0: t.resize(pick(t.size())); break;                                        // truncated
    case 1: t.insert(pick(t.size()), 1, static_cast<char>(pick(256))); break;      // a stray byte
    case 2: t.erase(pick(t.size()), 1); break;                                      // a lost byte
    case 3: t[pick(t.size())] = static_cast<char>(pick(256)); break;               // a flipped byte
    default: t += t.substr(pick(t.size()));                                         // trailing garbage
  }
  return t;
}

std::string FuzzGen::multipart(std::string* content_type) {
  const std::string b = chance(90) ? "fz" + std::to_string(pick(100000)) : std::string(pick(250), 'b');
  *content_type = chance(90) ? "multipart/form-data; boundary=" + b : value(0);
  static const char* names[] = {"a.jsonl", "a\nSet-Cookie: x=1", "q\\\"x", "../../etc/passwd", "",
                                "n\xff\xfe.jsonl", "\xe2\x82\xac.jsonl", "a\rb"};
  std::string body;
  if (chance(85)) {
    const char* purposes[] = {"batch", "fine-tune", "", "batch\r\n--x"};
    body += "--" + b + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n" +
            purposes[pick(4)] + "\r\n";
  }
  if (chance(85)) {
    body += "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + names[pick(8)] +
            "\"\r\nContent-Type: application/jsonl\r\n\r\n";
    body += chance(50) ? "{\"custom_id\":\"a\",\"method\":\"POST\",\"url\":\"/v1/completions\",\"body\":" +
                             json_body("/v1/completions") + "}\n"
                       : std::string(pick(3000), 'x');
    body += "\r\n";
  }
  if (chance(90)) body += "--" + b + "--\r\n";
  if (chance(15)) body = damage(body);
  return body;
}

std::string FuzzGen::path() {
  const std::string rid = chance(50) ? "file-" + std::to_string(pick(99999)) : "batch_" + std::to_string(pick(99));
  switch (pick(24)) {
    case 0: case 1: case 2: case 3: return "/v1/completions";
    case 4: case 5: case 6: return "/v1/chat/completions";
    case 7: return "/v1/models";
    case 8: return chance(50) ? "/v1/models/target" : "/v1/models/" + rid;
    case 9: return chance(50) ? "/health" : "/metrics";
    case 10: case 11: return "/v1/files";
    case 12: return "/v1/files/" + (chance(50) ? file_id_ : rid) + (chance(50) ? "/content" : "");
    case 13: return chance(50) ? "/v1/files/../../etc/passwd" : "/v1/files/%2e%2e%2f%00/content";
    case 14: case 15: return "/v1/batches";
    case 16: return "/v1/batches/" + (chance(50) ? batch_id_ : rid) + (chance(50) ? "/cancel" : "");
    case 17: return "/v1/batches?limit=" + number_value() + "&after=" + rid;
    case 18: return chance(50) ? "*" : "http://127.0.0.1/v1/models";
    case 19: return "/" + std::string(pick(3000), 'p');
    case 20: case 21: return chance(80) ? "/v1/messages" : "/v1/messages/count_tokens";
    default: return "/v1/responses";
  }
}

std::string FuzzGen::method(const std::string& p) {
  static const char* any[] = {"GET", "POST", "DELETE", "PUT", "HEAD", "OPTIONS", "PATCH", "FOO", "get"};
  if (chance(25)) return any[pick(9)];
  const bool post = p == "/v1/completions" || p == "/v1/chat/completions" || p == "/v1/files" ||
                    p == "/v1/batches" || p.find("/cancel") != std::string::npos ||
                    p.rfind("/v1/messages", 0) == 0 || p == "/v1/responses";
  return post ? "POST" : "GET";
}

FuzzCase FuzzGen::next() {
  FuzzCase c;
  const std::string p = path();
  std::string m = method(p);
  if (m == "DELETE" && p.find(file_id_) != std::string::npos) m = "GET";  // keep the fixture file
  std::string ct = "application/json", body;
  if (p == "/v1/files" && m == "POST") body = multipart(&ct);
  else if (m != "GET" && m != "HEAD") body = json_body(p);
  else if (chance(10)) body = value(0);
  if (chance(2)) body += std::string(70000, ' ');  // beyond max_body_bytes (65536 in the test): 413
  c.head = m == "HEAD";
  c.what = m + " " + p.substr(0, 80);
  const std::string version = chance(8) ? "HTTP/1.0" : chance(2) ? "HTTP/2.0" : "HTTP/1.1";
  std::string req = m + " " + p + " " + version + "\r\n";
  if (chance(95)) req += "Host: 127.0.0.1\r\n";
  if (chance(90)) req += "Content-Type: " + ct + "\r\n";
  if (chance(5)) req += "Expect: 100-continue\r\n";
  if (chance(5)) req += "Authorization: Bearer " + std::string(pick(100), 'k') + "\r\n";
  if (chance(3)) req += "X-Long: " + std::string(70000, 'h') + "\r\n";  // beyond the header limit
  if (chance(3)) req += "Broken header line\r\n";
  if (chance(2)) req += std::string("X-Nul: a\0b\r\n", 12);
  const uint64_t framing = pick(100);
  if (framing < 80) {
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  } else if (framing < 88) {  // chunked, sometimes broken
    req += "Transfer-Encoding: chunked\r\n";
    char len[32];
    std::snprintf(len, sizeof len, "%zx", body.size());
    body = body.empty() ? "0\r\n\r\n" : std::string(len) + "\r\n" + body + "\r\n0\r\n\r\n";
    if (chance(30)) body = damage(body), c.complete = false;
  } else if (framing < 92) {  // announced longer than sent
    req += "Content-Length: " + std::to_string(body.size() + 1 + pick(100)) + "\r\n";
    c.complete = false;
  } else if (framing < 95) {
    req += std::string("Content-Length: ") + (chance(50) ? "-1" : "abc") + "\r\n";
  } else if (framing < 97) {
    req += "Content-Length: " + std::to_string(body.size()) + "\r\nContent-Length: 1\r\n";
  } else {
    req += "Content-Length: 99999999999999999999\r\n";
    c.complete = false;
  }
  if (version == "HTTP/1.1") req += "Connection: close\r\n";
  c.bytes = req + "\r\n" + body;
  if (chance(3)) c.bytes = damage(c.bytes), c.complete = false;
  return c;
}

}  // namespace exspec::httptest
