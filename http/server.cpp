#include "http/server.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>

#include "config/engine_options.h"
#include "http/accept_loop.h"
#include "http/backend.h"
#include "http/line_start.h"
#include "http/server_context.h"
#include "http/session.h"
#include "jobs/batch_runner.h"
#include "jobs/open_store.h"
#include "model/initial_thread.h"

namespace exspec::http {
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// After the first signal: in-flight requests (those still compiling their grammar too) and batch
// lines get `seconds`; then every compile and sequence left is cancelled, the connections get a
// moment to write what that produced, and the io_context stops.
void drain(ServerContext& ctx, std::thread& loader, int64_t seconds, net::io_context& ioc) {
  using Clock = std::chrono::steady_clock;
  if (loader.joinable()) loader.join();
  if (Backend* b = ctx.backend.load()) {
    const auto deadline = Clock::now() + std::chrono::seconds(seconds);
    bool idle = false;
    while (!idle && Clock::now() < deadline) {
      const EngineStats st = ctx.keeper.call([b] { return b->engine->stats(); });
      idle = st.queued + st.active == 0 && ctx.inflight.load() == 0;
      if (!idle) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!idle) std::cerr << "exspec serve: drained for " << seconds << " s: cancelling what is still running" << std::endl;
    if (b->grammars) b->grammars->cancel_all();
    ctx.engine_stopping = true;
    ctx.keeper.call([b, idle] { b->engine->shutdown(idle); });
  }
  // Let the connections write what the last callbacks produced (the 503s of cancelled compiles).
  const auto until = Clock::now() + std::chrono::seconds(1);
  while (ctx.inflight.load() > 0 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ioc.stop();
}

}  // namespace

int serve(const Settings& cfg) {
  ServerContext ctx;
  ctx.cfg = cfg;
  std::unique_ptr<Backend> backend;  // outlives the io_context: connections cancel through it
  std::atomic<bool> failed{false};
  // Files/Batches state; the runner resumes unfinished batches once the models are loaded.
  std::unique_ptr<jobs::JobStore> jobs;
  if (!cfg.data_dir.empty() || !cfg.job_store.empty()) {
    try {
      jobs = jobs::open_job_store(cfg.job_store, cfg.data_dir, cfg.replica, cfg.batch_lease_ms);
    } catch (const std::exception& e) {
      if (cfg.job_store.empty())
        std::cerr << "exspec serve: cannot open the data directory " << cfg.data_dir << ": " << e.what() << "\n";
      else
        std::cerr << "exspec serve: cannot open the job store: " << e.what() << "\n";
      return 1;
    }
    if (!cfg.job_store.empty())
      std::cerr << "exspec serve: job store: " << jobs->where() << ", replica " << cfg.replica << ", batch lease "
                << cfg.batch_lease_ms << " ms" << std::endl;
    ctx.jobs = jobs.get();
    for (const std::string& w : jobs->audit()) std::cerr << "exspec serve: warning: " << w << std::endl;
  }
  EndpointLines lines(ctx);
  std::unique_ptr<jobs::BatchRunner> runner;  // destroyed before `backend`: its Generations hold the engine
  if (jobs) ctx.batches = (runner = std::make_unique<jobs::BatchRunner>(lines, *jobs, cfg.limits.max_batch_lines)).get();
  const int threads = std::max(1, cfg.http_threads);
  net::io_context ioc{threads};
  tcp::acceptor acceptor(ioc);
  try {
    const tcp::endpoint ep(net::ip::make_address(cfg.host), static_cast<unsigned short>(cfg.port));
    acceptor.open(ep.protocol());
    acceptor.set_option(net::socket_base::reuse_address(true));
    acceptor.bind(ep);
    acceptor.listen(net::socket_base::max_listen_connections);
  } catch (const std::exception& e) {
    std::cerr << "exspec serve: cannot listen on " << cfg.host << ":" << cfg.port << ": " << e.what() << "\n";
    return 1;
  }
  auto accepting = std::make_shared<AcceptLoop>(acceptor, ioc, ctx);
  std::cerr << "exspec serve: at most " << accepting->cap() << " connections (limits.max_connections"
            << (cfg.limits.max_connections ? "" : ": the file limit less 64") << ")" << std::endl;
  const auto local = acceptor.local_endpoint();
  const std::string url = "http://" + local.address().to_string() + ":" + std::to_string(local.port());
  std::cerr << "exspec serve: listening on " << url << " (loading " << cfg.model << ")" << std::endl;

  std::thread loader([&] {
    try {
      auto b = load_backend(cfg, "exspec serve");
      backend = std::move(b);
      ctx.backend = backend.get();
      ServerState expected = ServerState::Loading;
      if (ctx.state.compare_exchange_strong(expected, ServerState::Ready))
        std::cerr << "exspec serve: ready: model " << backend->served_name << " (" << backend->engine->info().model_dir
                  << (backend->engine->info().draft_dir.empty() ? "" : ", draft " + backend->engine->info().draft_dir)
                  << "), mode " << backend->mode << ", dtype " << backend->engine->info().dtype << ", " << url
                  << std::endl;
    } catch (const std::exception& e) {
      std::cerr << "exspec serve: error: cannot load the models: " << e.what() << std::endl;
      failed = true;
      ctx.state = ServerState::Failed;
      ioc.stop();
    }
  });

  std::thread drainer;
  net::signal_set signals(ioc, SIGINT, SIGTERM);
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec,
                                                                              int sig) {
    if (ec) return;
    if (ctx.state.load() == ServerState::Draining) {
      // What is committed stays: finished batch lines are in the job store; the rest run again
      // when a server starts on it.
      std::cerr << "exspec serve: signal " << sig << " again: exiting now" << std::endl;
      std::_Exit(128 + sig);
    }
    ctx.state = ServerState::Draining;
    boost::system::error_code ignored;
    acceptor.close(ignored);
    std::cerr << "exspec serve: signal " << sig << ": draining for at most " << cfg.limits.shutdown_timeout_s
              << " s (no new requests; in-flight ones finish; again to exit at once)" << std::endl;
    signals.async_wait(on_signal);
    drainer = std::thread([&] { drain(ctx, loader, cfg.limits.shutdown_timeout_s, ioc); });
  };
  signals.async_wait(on_signal);
  accepting->start();

  // The initial thread runs plain decoding's forwards meanwhile (model/initial_thread.h).
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back([&] { ioc.run(); });
  serve_on_initial_thread([&] { return ioc.stopped(); }, initial_threads(initial_threads_setting(cfg)));
  for (auto& t : pool) t.join();
  if (drainer.joinable()) drainer.join();
  if (loader.joinable()) loader.join();
  // The compile pool's last answers are posted to the io_context: it ends before that does.
  if (backend && backend->grammars) backend->grammars->stop();
  ctx.engine_stopping = true;
  if (backend) ctx.keeper.call([&] { backend->engine->shutdown(false); });
  if (runner) runner->stop();  // after the engine: its last callbacks are posted to the runner
  if (failed) return 1;
  std::cerr << "exspec serve: stopped" << std::endl;
  return 0;
}

}  // namespace exspec::http
