#include "http/call.h"

namespace exspec::http {
namespace bhttp = boost::beast::http;
using nlohmann::json;

Response json_response(int status, const std::string& body, unsigned version, bool keep_alive) {
  Response res{static_cast<bhttp::status>(status), version};
  res.set(bhttp::field::server, "exspec");
  res.set(bhttp::field::content_type, "application/json");
  res.keep_alive(keep_alive);
  res.body() = body;
  res.prepare_payload();
  return res;
}

Response error_response(const ApiError& e, unsigned version, bool keep_alive) {
  return json_response(e.status(), e.to_json().dump(-1, ' ', false, json::error_handler_t::replace), version,
                       keep_alive);
}

Response anthropic_error_response(const ApiError& e, unsigned version, bool keep_alive) {
  return json_response(e.status(), e.to_anthropic_json().dump(-1, ' ', false, json::error_handler_t::replace),
                       version, keep_alive);
}

Response error_response_for(const std::string& path, const ApiError& e, unsigned version, bool keep_alive) {
  return path.rfind("/v1/messages", 0) == 0 ? anthropic_error_response(e, version, keep_alive)
                                             : error_response(e, version, keep_alive);
}

Response Call::json(int status, const std::string& body) const {
  return json_response(status, body, req.version(), keep_alive);
}

Backend& need_ready(ServerContext& ctx) {
  switch (ctx.state.load()) {
    case ServerState::Ready: return *ctx.backend.load();
    case ServerState::Loading: throw ApiError(503, "the models are still loading; retry shortly", "", "loading");
    case ServerState::Draining: throw ApiError(503, "the server is shutting down", "", "shutting_down");
    default: throw ApiError(503, "the server failed to load its models", "", "not_ready");
  }
}

ModelFacts deferred_facts(const Backend& b) {
  ModelFacts facts = b.facts;
  facts.defer_grammar = true;
  return facts;
}

void start_generation(const Call& c, Routed& r, Backend& b, GenRequest g, std::shared_ptr<GenerationOutput> writer) {
  const bool compile = g.pending_grammar != nullptr;
  std::weak_ptr<GenerationOutput> out = writer ? std::weak_ptr<GenerationOutput>(writer) : c.out;
  auto gen = std::make_shared<Generation>(std::move(g), generation_env(c.ctx, b, c.post, 1), std::move(out), c.received);
  if (writer) gen->hold(std::move(writer));
  if (compile) gen->compile_then_start(b.facts.grammars);
  else gen->start();
  r.generation = std::move(gen);
}

}  // namespace exspec::http
