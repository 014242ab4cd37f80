// One request matched to its route (http/routes.h), as its handler reads it, and what a handler
// answers. Apart from the route table so that the handlers (jobs_api, tokenize_api) include
// this and the table includes them, with no circle.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/beast/http.hpp>

#include "http/api_error.h"
#include "http/generation.h"
#include "http/route_match.h"
#include "http/server_context.h"

namespace exspec::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;

struct Routed {
  std::optional<Response> response;        // answered at once
  std::shared_ptr<Generation> generation;  // or: a generation was started
  std::string endpoint;                    // metrics label: the route's pattern, or "other"
};

// One request matched to its route: what a handler reads.
struct Call {
  ServerContext& ctx;
  const Request& req;
  const Target& target;
  std::vector<std::string> params;  // the pattern's {names}' values, in order
  bool keep_alive;
  std::function<void(std::function<void()>)> post;  // runs a function on the connection's strand
  std::weak_ptr<GenerationOutput> out;
  std::chrono::steady_clock::time_point received;

  Response json(int status, const std::string& body) const;  // application/json, this request's version
};

Response json_response(int status, const std::string& body, unsigned version, bool keep_alive);
Response error_response(const ApiError& e, unsigned version, bool keep_alive);
// The same error in Anthropic's shape (the /v1/messages routes).
Response anthropic_error_response(const ApiError& e, unsigned version, bool keep_alive);
// The error in the shape of the API `path` belongs to: Anthropic's on the /v1/messages routes
// (their clients read errors so), OpenAI's elsewhere.
Response error_response_for(const std::string& path, const ApiError& e, unsigned version, bool keep_alive);

// The loaded models, or a 503 that says why not (loading, shutting down, failed).
Backend& need_ready(ServerContext& ctx);

// The facts an endpoint parses a generation request with: the backend's, with its grammar left to
// compile on the grammar pool (start_generation), where the client's going away cancels it.
ModelFacts deferred_facts(const Backend& b);
// Starts the Generation of a request parsed with deferred_facts, on this connection (its grammar
// compiled first, if it has one). `writer`: another API's output over the connection
// (http/dialect_output.h), which the Generation keeps alive; null: the chat / completions answer.
void start_generation(const Call& c, Routed& r, Backend& b, GenRequest g,
                      std::shared_ptr<GenerationOutput> writer = nullptr);

}  // namespace exspec::http
