#include "http/server_lifecycle.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "config/engine_options.h"
#include "http/accept_loop.h"
#include "http/backend.h"
#include "http/line_start.h"
#include "http/request_work.h"
#include "jobs/batch_runner.h"
#include "jobs/open_store.h"
#include "model/initial_thread.h"

namespace exspec::http {
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

ServerLifecycle::ServerLifecycle(const Settings& cfg)
    : cfg_(cfg), ioc_(std::max(1, cfg.http_threads)), acceptor_(ioc_), signals_(ioc_, SIGINT, SIGTERM) {
  ctx_.cfg = cfg;
  work_ = std::make_unique<RequestWork>(RequestWork::Options{cfg.limits.request_threads, cfg.limits.request_nice,
                                                             cfg.limits.max_request_queue});
  ctx_.work = work_.get();
}

// stop() joined the threads unless open() failed, when none had started.
ServerLifecycle::~ServerLifecycle() = default;

bool ServerLifecycle::open() { return open_jobs() && listen(); }

bool ServerLifecycle::open_jobs() {
  if (cfg_.data_dir.empty() && cfg_.job_store.empty()) return true;
  try {
    jobs_ = jobs::open_job_store(cfg_.job_store, cfg_.data_dir, cfg_.replica, cfg_.batch_lease_ms);
  } catch (const std::exception& e) {
    if (cfg_.job_store.empty())
      std::cerr << "exspec serve: cannot open the data directory " << cfg_.data_dir << ": " << e.what() << "\n";
    else
      std::cerr << "exspec serve: cannot open the job store: " << e.what() << "\n";
    return false;
  }
  if (!cfg_.job_store.empty())
    std::cerr << "exspec serve: job store: " << jobs_->where() << ", replica " << cfg_.replica << ", batch lease "
              << cfg_.batch_lease_ms << " ms" << std::endl;
  ctx_.jobs = jobs_.get();
  for (const std::string& w : jobs_->audit()) std::cerr << "exspec serve: warning: " << w << std::endl;
  // The runner resumes unfinished batches once the models are loaded.
  lines_ = std::make_unique<EndpointLines>(ctx_);
  runner_ = std::make_unique<jobs::BatchRunner>(*lines_, *jobs_, cfg_.limits.max_batch_lines);
  ctx_.batches = runner_.get();
  return true;
}

bool ServerLifecycle::listen() {
  try {
    const tcp::endpoint ep(net::ip::make_address(cfg_.host), static_cast<unsigned short>(cfg_.port));
    acceptor_.open(ep.protocol());
    acceptor_.set_option(net::socket_base::reuse_address(true));
    acceptor_.bind(ep);
    acceptor_.listen(net::socket_base::max_listen_connections);
  } catch (const std::exception& e) {
    std::cerr << "exspec serve: cannot listen on " << cfg_.host << ":" << cfg_.port << ": " << e.what() << "\n";
    return false;
  }
  accepting_ = std::make_shared<AcceptLoop>(acceptor_, ioc_, ctx_);
  std::cerr << "exspec serve: at most " << accepting_->cap() << " connections (limits.max_connections"
            << (cfg_.limits.max_connections ? "" : ": the file limit less 64") << ")" << std::endl;
  const auto local = acceptor_.local_endpoint();
  url_ = "http://" + local.address().to_string() + ":" + std::to_string(local.port());
  std::cerr << "exspec serve: listening on " << url_ << " (loading " << cfg_.model << ")" << std::endl;
  return true;
}

void ServerLifecycle::load() {
  try {
    backend_ = load_backend(cfg_, "exspec serve");
    ctx_.backend = backend_.get();
    ServerState expected = ServerState::Loading;  // a signal during the load leaves it Draining
    if (ctx_.state.compare_exchange_strong(expected, ServerState::Ready)) {
      const ModelInfo& info = backend_->engine->info();
      std::cerr << "exspec serve: ready: model " << backend_->served_name << " (" << info.model_dir
                << (info.draft_dir.empty() ? "" : ", draft " + info.draft_dir) << "), mode " << backend_->mode
                << ", dtype " << info.dtype << ", " << url_ << std::endl;
    }
  } catch (const std::exception& e) {
    std::cerr << "exspec serve: error: cannot load the models: " << e.what() << std::endl;
    failed_ = true;
    ctx_.state = ServerState::Failed;
    ioc_.stop();
  }
}

void ServerLifecycle::run() {
  // The loader's calibration forwards wait for the park below (model/initial_thread.h).
  const InitialThreadPark park;
  loader_ = std::thread([this] { load(); });
  wait_for_signal();
  accepting_->start();
  std::vector<std::thread> pool;
  for (int i = 0; i < std::max(1, cfg_.http_threads); ++i) pool.emplace_back([this] { ioc_.run(); });
  // The initial thread runs plain decoding's forwards meanwhile (model/initial_thread.h).
  serve_on_initial_thread([this] { return ioc_.stopped(); }, initial_threads(initial_threads_setting(cfg_)));
  for (auto& t : pool) t.join();
}

void ServerLifecycle::wait_for_signal() {
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) { on_signal(ec, sig); });
}

// The first signal starts the drain; the handler is armed again, and the second one ends the
// process at once. What is committed stays: finished batch lines are in the job store, the rest
// run again when a server starts on it.
void ServerLifecycle::on_signal(const boost::system::error_code& ec, int sig) {
  if (ec) return;
  if (ctx_.state.load() == ServerState::Draining) {
    std::cerr << "exspec serve: signal " << sig << " again: exiting now" << std::endl;
    std::_Exit(128 + sig);
  }
  ctx_.state = ServerState::Draining;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  std::cerr << "exspec serve: signal " << sig << ": draining for at most " << cfg_.limits.shutdown_timeout_s
            << " s (no new requests; in-flight ones finish; again to exit at once)" << std::endl;
  wait_for_signal();
  drainer_ = std::thread([this] { drain(); });
}

// In-flight requests (those still compiling their grammar too) and batch lines get
// limits.shutdown_timeout_s; then every compile and sequence left is cancelled, the connections
// get a moment to write what that produced, and the io_context stops.
void ServerLifecycle::drain() {
  if (loader_.joinable()) loader_.join();
  // The request work still waiting is dropped; what runs finishes (its answer goes nowhere).
  ctx_.work = nullptr;
  work_.reset();
  if (Backend* b = ctx_.backend.load()) {
    const bool idle = wait_idle(*b);
    if (!idle)
      std::cerr << "exspec serve: drained for " << cfg_.limits.shutdown_timeout_s
                << " s: cancelling what is still running" << std::endl;
    if (b->grammars) b->grammars->cancel_all();
    ctx_.engine_stopping = true;
    ctx_.keeper.call([b, idle] { b->engine->shutdown(idle); });
  }
  let_connections_write();
  ioc_.stop();
}

// Whether the engine and the connections went idle within the drain's bound.
bool ServerLifecycle::wait_idle(Backend& b) {
  const auto deadline = Clock::now() + std::chrono::seconds(cfg_.limits.shutdown_timeout_s);
  for (;;) {
    const EngineStats st = ctx_.keeper.call([&b] { return b.engine->stats(); });
    if (st.queued + st.active == 0 && ctx_.inflight.load() == 0) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The connections write what the last callbacks produced (the 503s of cancelled compiles).
void ServerLifecycle::let_connections_write() {
  const auto until = Clock::now() + std::chrono::seconds(1);
  while (ctx_.inflight.load() > 0 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

int ServerLifecycle::stop() {
  if (drainer_.joinable()) drainer_.join();
  if (loader_.joinable()) loader_.join();
  // In this order: the compile pool posts its last answers to the io_context (stopped, not yet
  // destroyed), and the engine's last callbacks are posted to the batch runner.
  if (backend_ && backend_->grammars) backend_->grammars->stop();
  ctx_.engine_stopping = true;
  if (backend_) ctx_.keeper.call([this] { backend_->engine->shutdown(false); });
  if (runner_) runner_->stop();
  if (failed_) return 1;
  std::cerr << "exspec serve: stopped" << std::endl;
  return 0;
}

}  // namespace exspec::http
