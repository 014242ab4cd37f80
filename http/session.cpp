#include "http/session.h"

#include <array>
#include <functional>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "grammar/budget.h"
#include "http/request_work.h"

namespace exspec::http {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

Session::Session(net::ip::tcp::socket&& socket, ServerContext& ctx) : stream_(std::move(socket)), ctx_(ctx) {
  ++ctx_.connections;
}

Session::~Session() {
  if (gen_) --ctx_.inflight;
  --ctx_.connections;
}

void Session::run() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->do_read(); });
}

void Session::do_read() {
  if (phase_ == Phase::Closed) return;
  phase_ = Phase::ReadingRequest;
  exchange_ = Exchange{};
  parser_.emplace();
  // No limit while the head is read: Beast would compare a Content-Length with it before we know
  // the route. The route's limit is set (and a Content-Length checked) before the body is read.
  parser_->body_limit(boost::none);
  exchange_.body_limit = ctx_.cfg.limits.max_body_bytes;
  parser_->header_limit(64 * 1024);
  refresh_deadline();
  bhttp::async_read_header(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
    if (ec) return self->on_read(ec, 0);
    auto& req = self->parser_->get();
    self->exchange_.received = std::chrono::steady_clock::now();
    const uint64_t limit = body_limit_for(self->ctx_.cfg.limits, req);
    self->exchange_.body_limit = limit;
    self->parser_->body_limit(limit);
    if (auto cl = self->parser_->content_length(); cl && *cl > limit)
      return self->on_read(bhttp::error::body_limit, 0);
    if (beast::iequals(req[bhttp::field::expect], "100-continue")) {
      auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, req.version());
      self->refresh_deadline();
      bhttp::async_write(self->stream_, *cont, [self, cont](beast::error_code ec2, size_t) {
        if (ec2) return self->close();
        self->read_body();
      });
      return;
    }
    self->read_body();
  });
}

void Session::refresh_deadline() {
  stream_.expires_after(std::chrono::seconds(std::max<int64_t>(1, ctx_.cfg.limits.idle_timeout_s)));
}

void Session::read_body() {
  if (parser_->is_done()) return on_read({}, 0);
  refresh_deadline();
  bhttp::async_read_some(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t n) {
    if (ec) return self->on_read(ec, n);
    self->read_body();
  });
}

void Session::write_full_some() {
  if (full_sr_->is_done()) {
    full_sr_.reset();
    return on_written({}, Item::Full);
  }
  // While a generation runs the watch read is out and the stream keeps no deadline (a generation
  // may take any time); a response that was whole when handled has the idle one.
  if (phase_ != Phase::Generating && phase_ != Phase::GeneratingUnwatched) refresh_deadline();
  bhttp::async_write_some(stream_, *full_sr_, [self = shared_from_this()](beast::error_code ec, size_t) {
    if (!ec) return self->write_full_some();
    self->full_sr_.reset();
    self->on_written(ec, Item::Full);
  });
}

void Session::on_read(beast::error_code ec, size_t) {
  if (phase_ == Phase::Closed) return;
  if (ec == bhttp::error::end_of_stream || ec == net::error::eof || ec == beast::error::timeout ||
      ec == net::error::operation_aborted || ec == net::error::connection_reset)
    return close();
  if (ec == bhttp::error::body_limit) {
    const std::string limit = std::to_string(exchange_.body_limit);
    return answer_unread(ApiError(413, "the request body is larger than the limit of " + limit +
                                           " bytes (limits.max_body_bytes; limits.max_file_bytes for uploads)",
                                  "", "request_too_large"));
  }
  if (ec) {
    if (&ec.category() != &bhttp::make_error_code(bhttp::error::end_of_stream).category()) return close();
    return answer_unread(ApiError(400, "malformed HTTP request: " + ec.message(), "", "bad_request"));
  }
  handle(parser_->release());
}

// The request could not be read whole: its answer is the last on this connection.
void Session::answer_unread(const ApiError& error) {
  exchange_.body_unread = true;
  exchange_.keep_alive = false;
  exchange_.status = error.status();
  exchange_.endpoint = "other";
  exchange_.received = std::chrono::steady_clock::now();
  phase_ = Phase::WritingResponse;
  // On Anthropic's routes (when the head was read), in Anthropic's shape, as route_request answers.
  const std::string target = parser_ && parser_->is_header_done() ? std::string(parser_->get().target()) : "";
  respond(error_response_for(target, error, 11, false));
}

namespace {

// route_request, with the CPU time of a request that carries a body counted as request work
// (parsing, validating, the chat template, tokenizing).
Routed route_counted(ServerContext& ctx, const Request& req, std::function<void(std::function<void()>)> post,
                     std::weak_ptr<GenerationOutput> out, std::chrono::steady_clock::time_point received) {
  const bool counted = !req.body().empty();
  const double cpu0 = counted ? grammar::thread_cpu_seconds() : 0;
  Routed r = route_request(ctx, req, std::move(post), std::move(out), received);
  if (counted) ctx.metrics.request_work(grammar::thread_cpu_seconds() - cpu0);
  return r;
}

}  // namespace

void Session::handle(Request&& req) {
  exchange_.http_version = req.version();
  exchange_.keep_alive = req.keep_alive();
  if (ctx_.work && req.body().size() > ctx_.cfg.limits.inline_body_bytes) return handle_elsewhere(std::move(req));
  auto post = [ex = stream_.get_executor()](std::function<void()> f) { net::post(ex, std::move(f)); };
  // A stream's first events (the echoed prompt, the chat role) are queued from inside route_request.
  routed(route_counted(ctx_, req, std::move(post), std::weak_ptr<GenerationOutput>(shared_from_this()), exchange_.received));
}

// A body above limits.inline_body_bytes is handled on the low-priority pool (http/request_work.h);
// the answer comes back to the strand. Meanwhile nothing is read or written here, and no deadline
// runs: under load the pool may take long, and the client is waiting for its answer.
void Session::handle_elsewhere(Request&& req) {
  auto self = shared_from_this();
  auto held = std::make_shared<Request>(std::move(req));
  auto post = [ex = stream_.get_executor()](std::function<void()> f) { net::post(ex, std::move(f)); };
  stream_.expires_never();
  const bool queued = ctx_.work->submit([self, held, post, received = exchange_.received] {
    auto r = std::make_shared<Routed>(route_counted(self->ctx_, *held, post, std::weak_ptr<GenerationOutput>(self), received));
    post([self, r] { self->routed(std::move(*r)); });
  });
  if (queued) return;
  ctx_.metrics.request_work_refused();
  const ApiError busy(429, "too many costly requests are waiting to be read (limits.max_request_queue); retry shortly",
                      "", "request_queue_full");
  Response res = error_response_for(std::string(held->target()), busy, exchange_.http_version, exchange_.keep_alive);
  res.set(bhttp::field::retry_after, "1");
  Routed r;
  r.endpoint = "other";
  r.response = std::move(res);
  routed(std::move(r));
}

void Session::routed(Routed&& r) {
  if (phase_ == Phase::Closed) return;
  exchange_.endpoint = r.endpoint;
  if (r.response) {
    exchange_.status = static_cast<int>(r.response->result_int());
    exchange_.keep_alive = r.response->keep_alive();
    phase_ = Phase::WritingResponse;
    return respond(std::move(*r.response));
  }
  gen_ = std::move(r.generation);
  self_hold_ = shared_from_this();  // the engine's callbacks reach us through the generation only
  ++ctx_.inflight;
  exchange_.status = 200;
  stream_.expires_never();
  phase_ = Phase::Generating;
  // A stream's head waits for its grammar: a schema refused at compile is answered as a 400.
  if (gen_->stream() && !gen_->compiling()) ensure_sse_head();
  start_watch();
}

// A draining server closes each connection after its response (exchange_done): the response
// says so, as route_request's own answers do, so that a client does not reuse it.
void Session::keep_alive_unless_draining() {
  if (ctx_.state.load() == ServerState::Draining) exchange_.keep_alive = false;
}

void Session::ensure_sse_head() {
  if (sse_head_) return;
  sse_head_ = std::make_unique<bhttp::response<bhttp::empty_body>>(bhttp::status::ok, exchange_.http_version);
  sse_head_->set(bhttp::field::server, "exspec");
  sse_head_->set(bhttp::field::content_type, "text/event-stream");
  sse_head_->set(bhttp::field::cache_control, "no-cache");
  // HTTP/1.0 has no chunked encoding: the stream's end is the connection's end there.
  exchange_.close_delimited = exchange_.http_version < 11;
  if (exchange_.close_delimited) exchange_.keep_alive = false;
  keep_alive_unless_draining();
  sse_head_->keep_alive(exchange_.keep_alive);
  sse_head_->chunked(!exchange_.close_delimited);
  sse_sr_ = std::make_unique<bhttp::response_serializer<bhttp::empty_body>>(*sse_head_);
  enqueue(Item{Item::Header, nullptr, nullptr});
}

void Session::respond(Response&& res) {
  enqueue(Item{Item::Full, nullptr, std::make_shared<Response>(std::move(res))});
}

void Session::send_event(std::string payload) {
  if (phase_ == Phase::Closed) return;
  ensure_sse_head();
  enqueue(Item{Item::Chunk, std::make_shared<std::string>("data: " + payload + "\n\n"), nullptr});
}

void Session::end_stream() {
  if (phase_ == Phase::Closed) return;
  ensure_sse_head();
  enqueue(Item{Item::Chunk, std::make_shared<std::string>("data: [DONE]\n\n"), nullptr});
  enqueue(Item{Item::Last, nullptr, nullptr});
}

void Session::send_raw_event(std::string event) {
  if (phase_ == Phase::Closed) return;
  ensure_sse_head();
  enqueue(Item{Item::Chunk, std::make_shared<std::string>(std::move(event)), nullptr});
}

void Session::end_raw_stream() {
  if (phase_ == Phase::Closed) return;
  ensure_sse_head();
  enqueue(Item{Item::Last, nullptr, nullptr});
}

void Session::send_final(int status, std::string body, std::string server_timing) {
  if (phase_ == Phase::Closed) return;
  exchange_.status = status;
  keep_alive_unless_draining();
  Response res = json_response(status, body, exchange_.http_version, exchange_.keep_alive);
  if (!server_timing.empty()) res.set("Server-Timing", server_timing);
  respond(std::move(res));
}

void Session::enqueue(Item item) {
  // Counted when the response is complete on our side (before the client can see it, so that a
  // /metrics request right after it includes it).
  if ((item.kind == Item::Full || item.kind == Item::Last) && !exchange_.counted) {
    exchange_.counted = true;
    ctx_.metrics.request_done(exchange_.endpoint, exchange_.status, since(exchange_.received));
  }
  queue_.push_back(std::move(item));
  pump();
}

void Session::pump() {
  if (write_in_flight_ || queue_.empty() || phase_ == Phase::Closed) return;
  write_in_flight_ = true;
  Item& it = queue_.front();
  auto self = shared_from_this();
  const auto kind = it.kind;
  auto done = [self, kind](beast::error_code ec, size_t) { self->on_written(ec, kind); };
  switch (kind) {
    case Item::Header:
      bhttp::async_write_header(stream_, *sse_sr_, std::move(done));
      break;
    case Item::Chunk: {
      if (exchange_.close_delimited) {
        net::async_write(stream_, net::buffer(*it.data), [done, data = it.data](beast::error_code ec, size_t n) {
          done(ec, n);
        });
        break;
      }
      auto chunk = std::make_shared<bhttp::chunk_body<net::const_buffer>>(net::buffer(*it.data));
      net::async_write(stream_, *chunk, [done, chunk, data = it.data](beast::error_code ec, size_t n) { done(ec, n); });
      break;
    }
    case Item::Last: {
      if (exchange_.close_delimited) {  // nothing to write: closing the connection ends the body
        net::post(stream_.get_executor(), [done] { done({}, 0); });
        break;
      }
      auto last = std::make_shared<bhttp::chunk_last<bhttp::chunk_crlf>>();
      net::async_write(stream_, *last, [done, last](beast::error_code ec, size_t n) { done(ec, n); });
      break;
    }
    case Item::Full:
      full_sr_ = std::make_shared<bhttp::response_serializer<bhttp::string_body>>(*it.full);
      write_full_some();
      break;
  }
}

void Session::on_written(beast::error_code ec, Item::Kind kind) {
  write_in_flight_ = false;
  if (!queue_.empty()) queue_.pop_front();
  if (phase_ == Phase::Closed) return;
  if (ec) return client_gone();
  if (kind == Item::Last || kind == Item::Full) return exchange_done();
  pump();
}

void Session::exchange_done() {
  end_generation();
  sse_sr_.reset();
  sse_head_.reset();
  queue_.clear();
  if (exchange_.body_unread) return linger_close();
  if (!exchange_.keep_alive || ctx_.state.load() == ServerState::Draining) return close();
  if (phase_ == Phase::Generating) {  // its watch read is still out
    phase_ = Phase::EndingWatch;
    beast::error_code ec;
    stream_.socket().cancel(ec);
    return;
  }
  do_read();
}

void Session::start_watch() {
  stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
    self->on_watch(ec, n);
  });
}

// The watch read returns while Generating, or in EndingWatch / Closed, which ended the generation.
void Session::on_watch(beast::error_code ec, size_t n) {
  if (!ec) buffer_.commit(n);
  if (phase_ == Phase::Closed) return;
  if (phase_ == Phase::EndingWatch) {
    if (!ec || ec == net::error::operation_aborted) return do_read();
    return close();
  }
  if (ec) return client_gone();
  // A pipelined request arrived while generating: keep it for later, keep watching (bounded).
  if (buffer_.size() < ctx_.cfg.limits.max_body_bytes + 65536) return start_watch();
  phase_ = Phase::GeneratingUnwatched;
}

void Session::client_gone() {
  if (gen_ && !exchange_.counted) {
    exchange_.counted = true;
    ctx_.metrics.client_disconnected();
    ctx_.metrics.request_done(exchange_.endpoint, 499, since(exchange_.received));  // nginx's "client closed request"
  }
  if (gen_) {
    gen_->abort();
  }
  end_generation();
  close();
}

void Session::end_generation() {
  if (gen_) {
    gen_.reset();
    --ctx_.inflight;
  }
  self_hold_.reset();
}

void Session::linger_close() {
  phase_ = Phase::Lingering;
  beast::error_code ec;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  stream_.expires_after(std::chrono::seconds(2));
  linger_read();
}

void Session::linger_read() {
  if (!linger_buf_) linger_buf_ = std::make_unique<std::array<char, 65536>>();
  stream_.async_read_some(net::buffer(*linger_buf_), [self = shared_from_this()](beast::error_code e, size_t n) {
    self->lingered_ += n;
    if (e || self->phase_ == Phase::Closed || self->lingered_ > (64u << 20)) return self->close();
    self->linger_read();
  });
}

void Session::close() {
  if (phase_ == Phase::Closed) return;
  phase_ = Phase::Closed;
  beast::error_code ec;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
  end_generation();
}

}  // namespace exspec::http
