#include "tests/http/cluster_support.h"

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <regex>
#include <sstream>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/http/support.h"

namespace exspec::httptest {
namespace fs = std::filesystem;

namespace {

// Root runs the parts as nobody (PostgreSQL refuses root; CI runs as root); anyone else as itself.
const passwd* unprivileged() {
  if (geteuid() != 0) return nullptr;
  const passwd* pw = getpwnam("nobody");
  if (!pw) FAIL("running as root, and there is no user 'nobody' to run PostgreSQL and HAProxy as");
  return pw;
}

std::string pg_bin(const std::string& tool) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec))
    if (fs::exists(e.path() / "bin" / tool)) found.push_back((e.path() / "bin" / tool).string());
  if (found.empty()) FAIL("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin: run scripts/setup");
  std::sort(found.begin(), found.end());
  return found.back();
}

// fork + (drop to the unprivileged user) + exec, output to `log`. The child dies with us
// (PR_SET_PDEATHSIG, set after the uid change, which would clear it): a test killed by its
// timeout leaves no server behind.
int spawn(const std::vector<std::string>& args, const std::string& log) {
  const passwd* pw = unprivileged();
  const int pid = fork();
  if (pid != 0) return pid;
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  dup2(fd, 1);
  dup2(fd, 2);
  if (pw && (setgroups(0, nullptr) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)) _exit(126);
  // The test's own directory may be closed to that user (a clone under a mode-0700 mktemp -d),
  // and HAProxy refuses to start where it cannot return to its starting directory: start in
  // the part's directory (the log's), which the user owns, else in /.
  const std::string home = log.substr(0, log.rfind('/'));
  if (chdir(home.c_str()) != 0 && chdir("/") != 0) _exit(125);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void stop(int& pid, int sig) {
  if (pid <= 0) return;
  kill(pid, sig);
  for (int i = 0; i < 500; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  pid = -1;
}

}  // namespace

std::string private_dir(const std::string& tag) {
  std::string tmpl = "/tmp/exspec-" + tag + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) FAIL("mkdtemp failed");
  if (const passwd* pw = unprivileged(); pw && chown(tmpl.c_str(), pw->pw_uid, pw->pw_gid) != 0)
    FAIL("cannot give " << tmpl << " to " << pw->pw_name);
  return tmpl;
}

int free_port() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || getsockname(s, reinterpret_cast<sockaddr*>(&a), &len))
    FAIL("cannot find a free port");
  close(s);
  return ntohs(a.sin_port);
}

PgServer::PgServer() : dir_(private_dir("pg")) {
  const std::string log = dir_ + "/postgres.log";
  int pid = spawn({pg_bin("initdb"), "-D", dir_ + "/data", "-U", "exspec", "--auth=trust", "-E", "UTF8", "--no-sync"},
                  log);
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) FAIL("initdb failed:\n" << read_all(log));
  // Only a socket in its own directory: no port to collide with. fsync off: the tests kill
  // replicas, never the database, and this keeps them fast.
  pid_ = spawn({pg_bin("postgres"), "-D", dir_ + "/data", "-k", dir_, "-c", "listen_addresses=", "-c", "fsync=off",
                "-c", "synchronous_commit=off", "-c", "max_connections=60"},
               log);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (true) {
    int ok = 1;
    run_capture("psql -X -q 'host=" + dir_ + " user=exspec dbname=postgres' -c 'SELECT 1' > /dev/null 2>&1", &ok);
    if (ok == 0) break;
    if (waitpid(pid_, nullptr, WNOHANG) == pid_ || std::chrono::steady_clock::now() > deadline) {
      pid_ = -1;
      FAIL("postgres did not start:\n" << read_all(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  int st2 = 0;
  const std::string out =
      run_capture("psql -X -q 'host=" + dir_ + " user=exspec dbname=postgres' -c 'CREATE DATABASE exspec' 2>&1", &st2);
  if (st2 != 0) FAIL("CREATE DATABASE failed: " << out);
}

PgServer::~PgServer() {
  stop(pid_, SIGINT);  // fast shutdown
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PgServer::url() const { return "postgresql:///exspec?host=" + dir_ + "&user=exspec"; }

std::string PgServer::psql(const std::string& sql) {
  const std::string file = dir_ + "/query.sql";
  std::ofstream(file) << sql;
  int st = 0;
  const std::string out =
      run_capture("psql -X -q -At -v ON_ERROR_STOP=1 'host=" + dir_ + " user=exspec dbname=exspec' -f " + file + " 2>&1", &st);
  if (st != 0) FAIL("psql failed: " << out << "\n" << sql);
  return out;
}

Balancer::Balancer(const std::vector<int>& replica_ports) : dir_(private_dir("haproxy")), port_(free_port()) {
  std::string cfg = read_all(std::string(HTTP_TEST_DIR) + "/../../config/haproxy.cfg");
  REQUIRE(cfg.find("bind 127.0.0.1:8000") != std::string::npos);
  cfg = std::regex_replace(cfg, std::regex("bind 127\\.0\\.0\\.1:8000"), "bind 127.0.0.1:" + std::to_string(port_));
  std::string servers;
  for (size_t i = 0; i < replica_ports.size(); ++i)
    servers += "  server r" + std::to_string(i + 1) + " 127.0.0.1:" + std::to_string(replica_ports[i]) + "\n";
  cfg = std::regex_replace(cfg, std::regex("(  server r[0-9]+ [^\\n]*\\n)+"), servers);
  const std::string path = dir_ + "/haproxy.cfg";
  std::ofstream(path) << cfg;
  pid_ = spawn({"/usr/sbin/haproxy", "-db", "-f", path}, dir_ + "/haproxy.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (true) {
    try {
      if (request(port_, "GET", "/health", "", {}, 5).status == 200) return;
    } catch (const std::exception&) {
    }
    if (waitpid(pid_, nullptr, WNOHANG) == pid_ || std::chrono::steady_clock::now() > deadline) {
      pid_ = -1;
      FAIL("haproxy did not answer /health:\n" << log() << "\n" << cfg);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Balancer::~Balancer() {
  stop(pid_, SIGUSR1);  // soft stop
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string Balancer::log() const { return read_all(dir_ + "/haproxy.log"); }

}  // namespace exspec::httptest
