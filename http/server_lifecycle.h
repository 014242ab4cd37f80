// The server's life in three phases, as members rather than a function's captured locals:
// load (a thread loads the models while the acceptor already answers 503 "loading"), drain (the
// first SIGINT/SIGTERM stops accepting and lets in-flight work finish, a second one exits at once)
// and stop (the engine and what feeds it shut down in a fixed order). Internal to http/: only
// server.cpp includes it.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>

#include "config/settings.h"
#include "http/server_context.h"

namespace exspec::jobs {
class BatchRunner;
class JobStore;
}  // namespace exspec::jobs

namespace exspec::http {

class AcceptLoop;
class EndpointLines;
class RequestWork;

class ServerLifecycle {
 public:
  explicit ServerLifecycle(const Settings& cfg);
  ~ServerLifecycle();
  ServerLifecycle(const ServerLifecycle&) = delete;
  ServerLifecycle& operator=(const ServerLifecycle&) = delete;

  // Opens the Files/Batches store (when configured) and binds the port. False, with the reason
  // on stderr, when either cannot be done: serve() then returns 1 before any thread starts.
  bool open();
  // Starts loading the models, the accept loop, the signal handler and the io_context's threads;
  // the calling (initial) thread serves plain decoding's forwards until the io_context stops.
  void run();
  // After run(): joins the threads and stops the engine's feeders in order. The exit status.
  int stop();

 private:
  bool open_jobs();
  bool listen();
  void load();  // on loader_
  void wait_for_signal();
  void on_signal(const boost::system::error_code& ec, int sig);
  void drain();  // on drainer_
  bool wait_idle(Backend& b);
  void let_connections_write();

  const Settings cfg_;
  // Declared in the order of their dependencies, so that destruction runs backwards through it:
  // the connections (on ioc_) cancel through backend_, the runner's Generations hold the engine.
  ServerContext ctx_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<jobs::JobStore> jobs_;
  std::unique_ptr<EndpointLines> lines_;  // how the runner's lines run: as the endpoints run them
  std::unique_ptr<jobs::BatchRunner> runner_;
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::signal_set signals_;
  // After ioc_: destroyed first, so that work it drops releases its connections while ioc_ lives.
  std::unique_ptr<RequestWork> work_;
  std::shared_ptr<AcceptLoop> accepting_;
  std::string url_;
  std::atomic<bool> failed_{false};
  std::thread loader_, drainer_;
};

}  // namespace exspec::http
