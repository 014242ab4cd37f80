// One HTTP connection: reads requests (keep-alive, body limit), answers them, streams SSE,
// and watches the socket while a generation runs so that a client that goes away cancels it.
// All of it runs on the connection's strand.
#pragma once
#include <array>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "http/api_error.h"
#include "http/generation.h"
#include "http/routes.h"
#include "http/server_context.h"

namespace exspec::http {

class Session : public std::enable_shared_from_this<Session>, public GenerationOutput {
 public:
  Session(boost::asio::ip::tcp::socket&& socket, ServerContext& ctx);
  ~Session() override;
  void run();

  // GenerationOutput (called on the strand)
  void send_event(std::string payload) override;
  void end_stream() override;
  void send_final(int status, std::string body, std::string server_timing) override;
  void send_raw_event(std::string event) override;
  void end_raw_stream() override;

 private:
  // Where the connection is in answering its current request. Writing is not a phase of its own:
  // while a generation runs, its output is written as it comes, beside the read that watches.
  enum class Phase {
    ReadingRequest,   // its head, the 100 Continue asked for, its body
    WritingResponse,  // a response that was whole when the request was handled (or a read error's)
    // The engine answers the request and its output is written as it comes. A read watches the
    // socket, so that a client that goes away cancels the generation; it keeps what a client
    // pipelines meanwhile for the next request.
    Generating,
    // As Generating, once pipelined bytes reached their bound: nothing reads until the response is
    // out, and a client that went away shows only when a write fails.
    GeneratingUnwatched,
    // The response is out; the watch read was cancelled. The next request is read once it has
    // returned, since both read into the same buffer.
    EndingWatch,
    // An error was answered before the request's body was read: drop what the client still sends
    // for a moment, then close (see linger_close).
    Lingering,
    Closed,
  };
  // The request being answered and its response: fresh for each request read.
  struct Exchange {
    std::string endpoint;  // the metrics' label for it
    unsigned http_version = 11;
    int status = 200;
    bool keep_alive = true;
    bool close_delimited = false;  // an HTTP/1.0 stream: raw events, ended by closing
    bool body_unread = false;      // answered before its body was (fully) read
    bool counted = false;          // its outcome is in the metrics
    uint64_t body_limit = 0;
    std::chrono::steady_clock::time_point received;
  };
  struct Item {
    enum Kind { Header, Chunk, Last, Full } kind;
    std::shared_ptr<std::string> data;
    std::shared_ptr<Response> full;
  };
  void do_read();
  // The body, a piece at a time: the idle deadline restarts with each piece, so a large upload
  // on a slow link is cut only when it stalls, not when it takes long.
  void read_body();
  // The front item's whole response, a piece at a time, the idle deadline restarting with each
  // piece (as read_body) unless a generation runs; then on_written.
  void write_full_some();
  void refresh_deadline();
  void keep_alive_unless_draining();
  void on_read(boost::beast::error_code ec, size_t bytes);
  void answer_unread(const ApiError& error);
  void handle(Request&& req);
  void handle_elsewhere(Request&& req);  // on the request-work pool
  void routed(Routed&& r);               // the answer, or the started generation
  void respond(Response&& res);
  void enqueue(Item item);
  void pump();
  void on_written(boost::beast::error_code ec, Item::Kind kind);
  void exchange_done();  // the response went out: next request or close
  void start_watch();
  void on_watch(boost::beast::error_code ec, size_t bytes);
  void client_gone();
  void end_generation();
  void close();
  // After an error answered before the request body was read (413, malformed): stop sending,
  // read and drop what the client still sends for a moment, then close. Closing at once would
  // reset the connection and the client could lose the error response.
  void linger_close();
  void linger_read();
  void ensure_sse_head();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  ServerContext& ctx_;
  Phase phase_ = Phase::ReadingRequest;
  Exchange exchange_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::shared_ptr<Generation> gen_;
  std::shared_ptr<Session> self_hold_;  // set while a generation runs
  std::unique_ptr<std::array<char, 65536>> linger_buf_;
  size_t lingered_ = 0;
  // Written one at a time, in order: the front is the one being written while write_in_flight_.
  std::deque<Item> queue_;
  bool write_in_flight_ = false;
  std::shared_ptr<boost::beast::http::response_serializer<boost::beast::http::string_body>> full_sr_;
  std::unique_ptr<boost::beast::http::response<boost::beast::http::empty_body>> sse_head_;
  std::unique_ptr<boost::beast::http::response_serializer<boost::beast::http::empty_body>> sse_sr_;
};

}  // namespace exspec::http
