// Generated malformed requests for the fuzz test: JSON bodies mutated from valid ones (values of
// every type and range, raw literals nlohmann cannot hold such as 1e999, invalid UTF-8, deep
// nesting, byte-level damage), multipart uploads with hostile names and broken framing, every
// endpoint and method, and HTTP framing mistakes. Deterministic for a seed (std::mt19937_64 is
// specified exactly by the standard; no std distributions, whose output is not).
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace exspec::httptest {

struct FuzzCase {
  std::string bytes;      // one or more raw HTTP requests
  int requests = 1;       // how many responses may come back
  bool complete = true;   // the framing is whole: a response must come (else the client half-closes)
  bool head = false;      // the first request is HEAD (its response has no body)
  std::string what;       // for failure messages
};

class FuzzGen {
 public:
  // `file_id` and `batch_id`: existing objects, so that mutated requests reach deep code paths.
  FuzzGen(uint64_t seed, std::string file_id, std::string batch_id)
      : rng_(seed), file_id_(std::move(file_id)), batch_id_(std::move(batch_id)) {}
  FuzzCase next();

 private:
  uint64_t pick(uint64_t n) { return n ? rng_() % n : 0; }
  bool chance(int percent) { return pick(100) < static_cast<uint64_t>(percent); }
  std::string value(int depth);      // JSON text of a random value (sometimes not valid JSON)
  std::string string_value();        // a JSON string literal with odd content
  std::string number_value();
  std::string messages_value();      // chat messages, mostly well-shaped, with odd parts
  std::string object(const std::vector<std::pair<std::string, std::string>>& fields);
  std::string json_body(const std::string& path);  // a mutated body for the endpoint
  std::string damage(std::string text);            // byte-level damage
  std::string multipart(std::string* content_type);
  std::string path();
  std::string method(const std::string& path);

  std::mt19937_64 rng_;
  std::string file_id_, batch_id_;
};

}  // namespace exspec::httptest
