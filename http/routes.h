// Request routing by one table (http/routes.cpp): method, path pattern, API key, body limit and
// handler of every endpoint. Unknown paths get 404, a known path with another method 405 with
// Allow; the answers that need no engine work (models, health, metrics) are made here, and
// generation requests come back as a started Generation.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <boost/beast/http.hpp>

#include "http/call.h"

namespace exspec::http {

// Which limit a request's body has: limits.max_body_bytes, or for uploads limits.max_file_bytes.
enum class BodyLimit { Request, Upload };

struct Route {
  boost::beast::http::verb method;  // GET routes answer HEAD too
  const char* pattern;              // "/v1/files/{id}/content"; a last "{id...}" takes the rest of the path
  bool auth;                        // needs the API key, when the server has one
  BodyLimit body;
  void (*handle)(const Call&, Routed&);  // sets the response or the generation; throws ApiError
};

const std::vector<Route>& route_table();

// `post` runs a function on the connection's strand.
Routed route_request(ServerContext& ctx, const Request& req, std::function<void(std::function<void()>)> post,
                     std::weak_ptr<GenerationOutput> out, std::chrono::steady_clock::time_point received);

// The largest body a request may send, decided from its head alone (before any of the body is
// read), by its route's BodyLimit.
uint64_t body_limit_for(const Limits& limits, const Request& head);

}  // namespace exspec::http
