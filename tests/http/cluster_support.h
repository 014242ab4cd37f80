// The real parts of a scale-out deployment, started by the tests themselves: a PostgreSQL server
// (Debian's postgresql-15 binaries) and HAProxy, each in a temporary directory and as an
// unprivileged user: when the tests run as root (CI does), the child drops to `nobody` before it
// execs (PostgreSQL refuses to run as root). Both are stopped and their directories removed by
// the destructors.
#pragma once
#include <string>
#include <vector>

namespace exspec::httptest {

// A directory of its own under /tmp, owned by the unprivileged user the parts run as.
std::string private_dir(const std::string& tag);
int free_port();  // a loopback port free right now

class PgServer {
 public:
  PgServer();  // initdb, start (socket only, in its directory), CREATE DATABASE exspec
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;
  std::string url() const;                   // postgresql:///exspec?host=DIR&user=exspec
  std::string psql(const std::string& sql);  // psql -At: rows of |-separated columns; FAILs on error

 private:
  std::string dir_;
  int pid_ = -1;
};

class Balancer {
 public:
  // config/haproxy.cfg with its bind port and server lines replaced by these replicas' ports.
  explicit Balancer(const std::vector<int>& replica_ports);
  ~Balancer();
  Balancer(const Balancer&) = delete;
  Balancer& operator=(const Balancer&) = delete;
  int port() const { return port_; }
  std::string log() const;

 private:
  std::string dir_;
  int pid_ = -1, port_ = 0;
};

}  // namespace exspec::httptest
