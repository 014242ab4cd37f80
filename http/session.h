// One HTTP connection: reads requests (keep-alive, body limit), answers them, streams SSE,
// and watches the socket while a generation runs so that a client that goes away cancels it.
// All of it runs on the connection's strand.
#pragma once
#include <array>
#include <memory>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

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

 private:
  struct Item {
    enum Kind { Header, Chunk, Last, Full } kind;
    std::shared_ptr<std::string> data;
    std::shared_ptr<Response> full;
  };
  void do_read();
  void on_read(boost::beast::error_code ec, size_t bytes);
  void handle(Request&& req);
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
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::shared_ptr<Generation> gen_;
  std::shared_ptr<Session> self_hold_;  // set while a generation runs
  std::string endpoint_;
  unsigned version_ = 11;
  bool keep_alive_ = true, closed_ = false, writing_ = false, watching_ = false, resume_after_watch_ = false;
  bool reading_ = false, recorded_ = false;
  bool unread_input_ = false;  // the request body was not (fully) read
  bool close_delimited_ = false;  // an HTTP/1.0 stream: raw events, ended by closing
  uint64_t body_limit_ = 0;    // of the request being read
  std::unique_ptr<std::array<char, 65536>> linger_buf_;
  size_t lingered_ = 0;
  int status_ = 200;
  std::chrono::steady_clock::time_point received_;
  std::deque<Item> queue_;
  std::unique_ptr<boost::beast::http::response<boost::beast::http::empty_body>> sse_head_;
  std::unique_ptr<boost::beast::http::response_serializer<boost::beast::http::empty_body>> sse_sr_;
};

}  // namespace exspec::http
