// Accepts connections for the server, within two limits: a connection cap (limits.max_connections;
// 0 = the process's file limit less a reserve for the store, the models and the engine) beyond
// which a new connection is answered 503 too_many_connections and closed, and, when accept fails
// for want of file descriptors (EMFILE, ENFILE) anyway, a pause before the next try instead of a
// retry loop that burns a core while the open connections keep being served. Both log a line
// (at most every 10 s) saying which limit to raise.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "http/server_context.h"

namespace exspec::http {

// The cap that limits.max_connections = 0 stands for: RLIMIT_NOFILE less 64, at least 1.
int64_t auto_max_connections();

class AcceptLoop : public std::enable_shared_from_this<AcceptLoop> {
 public:
  AcceptLoop(boost::asio::ip::tcp::acceptor& acceptor, boost::asio::io_context& ioc, ServerContext& ctx);
  void start();
  int64_t cap() const { return cap_; }

 private:
  void on_accept(const boost::system::error_code& ec, boost::asio::ip::tcp::socket s);
  void refuse(boost::asio::ip::tcp::socket s);
  bool may_log(std::chrono::steady_clock::time_point& last);

  boost::asio::ip::tcp::acceptor& acceptor_;
  boost::asio::io_context& ioc_;
  ServerContext& ctx_;
  boost::asio::steady_timer pause_;
  int64_t cap_;
  std::chrono::steady_clock::time_point logged_cap_{}, logged_fds_{};
};

}  // namespace exspec::http
