#include "http/session.h"

#include <array>
#include <functional>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

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
  if (closed_) return;
  parser_.emplace();
  // No limit while the head is read: Beast would compare a Content-Length with it before we know
  // the route. The route's limit is set (and a Content-Length checked) before the body is read.
  parser_->body_limit(boost::none);
  body_limit_ = ctx_.cfg.limits.max_body_bytes;
  parser_->header_limit(64 * 1024);
  stream_.expires_after(std::chrono::seconds(std::max<int64_t>(1, ctx_.cfg.limits.idle_timeout_s)));
  reading_ = true;
  bhttp::async_read_header(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
    if (ec) return self->on_read(ec, 0);
    auto& req = self->parser_->get();
    self->received_ = std::chrono::steady_clock::now();
    const uint64_t limit = body_limit_for(self->ctx_.cfg.limits, req);
    self->body_limit_ = limit;
    self->parser_->body_limit(limit);
    if (auto cl = self->parser_->content_length(); cl && *cl > limit)
      return self->on_read(bhttp::error::body_limit, 0);
    auto read_body = [self] {
      bhttp::async_read(self->stream_, self->buffer_, *self->parser_,
                        [self](beast::error_code ec2, size_t n) { self->on_read(ec2, n); });
    };
    if (beast::iequals(req[bhttp::field::expect], "100-continue")) {
      auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, req.version());
      bhttp::async_write(self->stream_, *cont, [self, cont, read_body](beast::error_code ec2, size_t) {
        if (ec2) return self->close();
        read_body();
      });
      return;
    }
    read_body();
  });
}

void Session::on_read(beast::error_code ec, size_t) {
  reading_ = false;
  if (closed_) return;
  if (ec == bhttp::error::end_of_stream || ec == net::error::eof || ec == beast::error::timeout ||
      ec == net::error::operation_aborted || ec == net::error::connection_reset)
    return close();
  if (ec == bhttp::error::body_limit) {
    unread_input_ = true;
    recorded_ = false;
    keep_alive_ = false;
    status_ = 413;
    endpoint_ = "other";
    received_ = std::chrono::steady_clock::now();
    return respond(error_response(
        ApiError(413, "the request body is larger than the limit of " + std::to_string(body_limit_) +
                          " bytes (limits.max_body_bytes; limits.max_file_bytes for uploads)", "", "request_too_large"),
        11, false));
  }
  if (ec) {
    if (&ec.category() != &bhttp::make_error_code(bhttp::error::end_of_stream).category()) return close();
    unread_input_ = true;
    recorded_ = false;
    keep_alive_ = false;
    status_ = 400;
    endpoint_ = "other";
    received_ = std::chrono::steady_clock::now();
    return respond(error_response(ApiError(400, "malformed HTTP request: " + ec.message(), "", "bad_request"), 11, false));
  }
  handle(parser_->release());
}

void Session::handle(Request&& req) {
  recorded_ = false;
  version_ = req.version();
  keep_alive_ = req.keep_alive();
  auto self = shared_from_this();
  auto post = [ex = stream_.get_executor()](std::function<void()> f) { net::post(ex, std::move(f)); };
  Routed r = route_request(ctx_, req, std::move(post), std::weak_ptr<GenerationOutput>(self), received_);
  endpoint_ = r.endpoint;
  if (r.response) {
    status_ = static_cast<int>(r.response->result_int());
    keep_alive_ = r.response->keep_alive();
    return respond(std::move(*r.response));
  }
  gen_ = std::move(r.generation);
  self_hold_ = self;  // the engine's callbacks reach us through the generation only
  ++ctx_.inflight;
  status_ = 200;
  stream_.expires_never();
  if (gen_->stream()) ensure_sse_head();
  start_watch();
}

void Session::ensure_sse_head() {
  if (sse_head_) return;
  sse_head_ = std::make_unique<bhttp::response<bhttp::empty_body>>(bhttp::status::ok, version_);
  sse_head_->set(bhttp::field::server, "exspec");
  sse_head_->set(bhttp::field::content_type, "text/event-stream");
  sse_head_->set(bhttp::field::cache_control, "no-cache");
  // HTTP/1.0 has no chunked encoding: the stream's end is the connection's end there.
  close_delimited_ = version_ < 11;
  if (close_delimited_) keep_alive_ = false;
  sse_head_->keep_alive(keep_alive_);
  sse_head_->chunked(!close_delimited_);
  sse_sr_ = std::make_unique<bhttp::response_serializer<bhttp::empty_body>>(*sse_head_);
  enqueue(Item{Item::Header, nullptr, nullptr});
}

void Session::respond(Response&& res) {
  enqueue(Item{Item::Full, nullptr, std::make_shared<Response>(std::move(res))});
}

void Session::send_event(std::string payload) {
  if (closed_) return;
  ensure_sse_head();
  enqueue(Item{Item::Chunk, std::make_shared<std::string>("data: " + payload + "\n\n"), nullptr});
}

void Session::end_stream() {
  if (closed_) return;
  ensure_sse_head();
  enqueue(Item{Item::Chunk, std::make_shared<std::string>("data: [DONE]\n\n"), nullptr});
  enqueue(Item{Item::Last, nullptr, nullptr});
}

void Session::send_final(int status, std::string body, std::string server_timing) {
  if (closed_) return;
  status_ = status;
  Response res = json_response(status, body, version_, keep_alive_);
  if (!server_timing.empty()) res.set("Server-Timing", server_timing);
  respond(std::move(res));
}

void Session::enqueue(Item item) {
  // Counted when the response is complete on our side (before the client can see it, so that a
  // /metrics request right after it includes it).
  if ((item.kind == Item::Full || item.kind == Item::Last) && !recorded_) {
    recorded_ = true;
    ctx_.metrics.request_done(endpoint_, status_, since(received_));
  }
  queue_.push_back(std::move(item));
  pump();
}

void Session::pump() {
  if (writing_ || queue_.empty() || closed_) return;
  writing_ = true;
  Item& it = queue_.front();
  auto self = shared_from_this();
  const auto kind = it.kind;
  auto done = [self, kind](beast::error_code ec, size_t) { self->on_written(ec, kind); };
  switch (kind) {
    case Item::Header:
      bhttp::async_write_header(stream_, *sse_sr_, std::move(done));
      break;
    case Item::Chunk: {
      if (close_delimited_) {
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
      if (close_delimited_) {  // nothing to write: closing the connection ends the body
        net::post(stream_.get_executor(), [done] { done({}, 0); });
        break;
      }
      auto last = std::make_shared<bhttp::chunk_last<bhttp::chunk_crlf>>();
      net::async_write(stream_, *last, [done, last](beast::error_code ec, size_t n) { done(ec, n); });
      break;
    }
    case Item::Full:
      bhttp::async_write(stream_, *it.full, [done, full = it.full](beast::error_code ec, size_t n) { done(ec, n); });
      break;
  }
}

void Session::on_written(beast::error_code ec, Item::Kind kind) {
  writing_ = false;
  if (!queue_.empty()) queue_.pop_front();
  if (closed_) return;
  if (ec) return client_gone();
  if (kind == Item::Last || kind == Item::Full) return exchange_done();
  pump();
}

void Session::exchange_done() {
  end_generation();
  sse_sr_.reset();
  sse_head_.reset();
  close_delimited_ = false;
  queue_.clear();
  if (unread_input_) return linger_close();
  if (!keep_alive_ || ctx_.state.load() == ServerState::Draining) return close();
  if (watching_) {
    resume_after_watch_ = true;
    beast::error_code ec;
    stream_.socket().cancel(ec);
    return;
  }
  do_read();
}

void Session::start_watch() {
  if (watching_ || closed_) return;
  watching_ = true;
  stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
    self->on_watch(ec, n);
  });
}

void Session::on_watch(beast::error_code ec, size_t n) {
  watching_ = false;
  if (!ec) buffer_.commit(n);
  if (closed_) return;
  if (resume_after_watch_) {
    resume_after_watch_ = false;
    if (!ec || ec == net::error::operation_aborted) return do_read();
    return close();
  }
  if (!ec) {
    // A pipelined request arrived while generating: keep it for later, keep watching (bounded).
    if (gen_ && buffer_.size() < ctx_.cfg.limits.max_body_bytes + 65536) start_watch();
    return;
  }
  client_gone();
}

void Session::client_gone() {
  if (gen_ && !recorded_) {
    recorded_ = true;
    ctx_.metrics.client_disconnected();
    ctx_.metrics.request_done(endpoint_, 499, since(received_));  // nginx's "client closed request"
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
  beast::error_code ec;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  stream_.expires_after(std::chrono::seconds(2));
  linger_read();
}

void Session::linger_read() {
  if (!linger_buf_) linger_buf_ = std::make_unique<std::array<char, 65536>>();
  stream_.async_read_some(net::buffer(*linger_buf_), [self = shared_from_this()](beast::error_code e, size_t n) {
    self->lingered_ += n;
    if (e || self->closed_ || self->lingered_ > (64u << 20)) return self->close();
    self->linger_read();
  });
}

void Session::close() {
  if (closed_) return;
  closed_ = true;
  beast::error_code ec;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
  end_generation();
}

}  // namespace exspec::http
