#include "http/accept_loop.h"

#include <sys/resource.h>

#include <array>
#include <iostream>

#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/write.hpp>

#include "http/routes.h"
#include "http/session.h"

namespace exspec::http {
namespace net = boost::asio;
using tcp = net::ip::tcp;

int64_t auto_max_connections() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 4096;
  return std::max<int64_t>(1, static_cast<int64_t>(rl.rlim_cur) - 64);
}

AcceptLoop::AcceptLoop(tcp::acceptor& acceptor, net::io_context& ioc, ServerContext& ctx)
    : acceptor_(acceptor), ioc_(ioc), ctx_(ctx), pause_(ioc),
      cap_(ctx.cfg.limits.max_connections ? static_cast<int64_t>(ctx.cfg.limits.max_connections)
                                          : auto_max_connections()) {}

void AcceptLoop::start() {
  acceptor_.async_accept(net::make_strand(ioc_), [self = shared_from_this()](boost::system::error_code ec,
                                                                              tcp::socket s) {
    self->on_accept(ec, std::move(s));
  });
}

bool AcceptLoop::may_log(std::chrono::steady_clock::time_point& last) {
  const auto now = std::chrono::steady_clock::now();
  if (last != std::chrono::steady_clock::time_point{} && now - last < std::chrono::seconds(10)) return false;
  last = now;
  return true;
}

void AcceptLoop::on_accept(const boost::system::error_code& ec, tcp::socket s) {
  if (!acceptor_.is_open()) return;
  if (ec == net::error::connection_aborted) return start();  // that client gave up: next one
  if (ec) {
    // EMFILE, ENFILE, ENOBUFS...: retrying at once fails the same way, as fast as the CPU allows.
    const bool fds = ec == net::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system;
    if (may_log(logged_fds_))
      std::cerr << "exspec serve: " << (fds ? "out of file descriptors" : "cannot accept connections") << " ("
                << ec.message() << ") with " << ctx_.connections.load()
                << " connections open: new connections wait; open ones are served. Raise the file limit (ulimit "
                   "-n) or lower limits.max_connections (now " << cap_ << ")" << std::endl;
    pause_.expires_after(std::chrono::milliseconds(100));
    pause_.async_wait([self = shared_from_this()](const boost::system::error_code&) { self->start(); });
    return;
  }
  if (ctx_.connections.load() >= cap_) {
    refuse(std::move(s));
  } else {
    boost::system::error_code ignored;
    s.set_option(tcp::no_delay(true), ignored);
    std::make_shared<Session>(std::move(s), ctx_)->run();
  }
  start();
}

void AcceptLoop::refuse(tcp::socket s) {
  ctx_.metrics.connection_refused();
  if (may_log(logged_cap_))
    std::cerr << "exspec serve: connection limit reached (limits.max_connections = " << cap_
              << "): new connections are answered 503 until others close" << std::endl;
  // Answered without reading the request. Then what the client sends is read and dropped for a
  // moment before closing: closing with unread input resets the connection, and the client could
  // lose the answer.
  struct Refusal {
    boost::beast::tcp_stream stream;
    Response res;
    std::array<char, 4096> buf;
    size_t dropped = 0;
    void drain(std::shared_ptr<Refusal> self) {
      stream.async_read_some(net::buffer(buf), [self](boost::system::error_code ec, size_t n) {
        self->dropped += n;
        if (ec || self->dropped > (64u << 10)) return self->stream.close();
        self->drain(self);
      });
    }
  };
  auto r = std::make_shared<Refusal>(Refusal{boost::beast::tcp_stream(std::move(s)),
      error_response(ApiError(503, "the server is at its connection limit (" + std::to_string(cap_) +
                                       ", limits.max_connections); retry shortly", "", "too_many_connections"),
                     11, false), {}, 0});
  r->stream.expires_after(std::chrono::seconds(1));
  boost::beast::http::async_write(r->stream, r->res, [r](boost::system::error_code ec, size_t) {
    if (ec) return r->stream.close();
    boost::system::error_code ignored;
    r->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    r->drain(r);
  });
}

}  // namespace exspec::http
