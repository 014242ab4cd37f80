// Request routing: which endpoint, authentication, and the answers that need no engine work
// (models, health, metrics, errors). Generation requests come back as a started Generation.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <boost/beast/http.hpp>

#include "http/api_error.h"
#include "http/generation.h"
#include "http/server_context.h"

namespace exspec::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;

struct Routed {
  std::optional<Response> response;        // answered at once
  std::shared_ptr<Generation> generation;  // or: a generation was started
  std::string endpoint;                    // metrics label
};

// `post` runs a function on the connection's strand.
Routed route_request(ServerContext& ctx, const Request& req, std::function<void(std::function<void()>)> post,
                     std::weak_ptr<GenerationOutput> out, std::chrono::steady_clock::time_point received);

// The largest body a request may send, decided from its head alone (before any of the body is
// read): uploads (POST /v1/files) take limits.max_file_bytes, everything else limits.max_body_bytes.
uint64_t body_limit_for(const Limits& limits, const Request& head);

Response json_response(int status, const std::string& body, unsigned version, bool keep_alive);
Response error_response(const ApiError& e, unsigned version, bool keep_alive);

}  // namespace exspec::http
