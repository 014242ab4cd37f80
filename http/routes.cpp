#include "http/routes.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "http/batches_api.h"
#include "http/files_api.h"
#include "http/json_body.h"
#include "http/safe_text.h"
#include "http/tokenize_api.h"

namespace exspec::http {
namespace bhttp = boost::beast::http;
using nlohmann::json;
using nlohmann::ordered_json;

uint64_t body_limit_for(const Limits& lim, const Request& head) {
  std::string_view path(head.target().data(), head.target().size());
  path = path.substr(0, path.find('?'));
  if (head.method() == bhttp::verb::post && path == "/v1/files")
    return std::max<uint64_t>(lim.max_body_bytes, lim.max_file_bytes);
  return lim.max_body_bytes;
}

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

namespace {

void need_method(const Request& req, bhttp::verb v, const char* allow) {
  if (req.method() == v || (v == bhttp::verb::get && req.method() == bhttp::verb::head)) return;
  throw ApiError(405, std::string("method ") + std::string(req.method_string()) + " is not allowed here; use " + allow,
                 "", "method_not_allowed");
}

void need_auth(const ServerContext& ctx, const Request& req) {
  if (ctx.cfg.api_key.empty()) return;
  auto it = req.find(bhttp::field::authorization);
  if (it == req.end())
    throw ApiError(401, "You didn't provide an API key. Send it as 'Authorization: Bearer KEY'.", "", "invalid_api_key");
  if (!constant_time_equal(it->value(), "Bearer " + ctx.cfg.api_key))
    throw ApiError(401, "Incorrect API key provided.", "", "invalid_api_key");
}

Backend& need_ready(ServerContext& ctx) {
  switch (ctx.state.load()) {
    case ServerState::Ready: return *ctx.backend.load();
    case ServerState::Loading: throw ApiError(503, "the models are still loading; retry shortly", "", "loading");
    case ServerState::Draining: throw ApiError(503, "the server is shutting down", "", "shutting_down");
    default: throw ApiError(503, "the server failed to load its models", "", "not_ready");
  }
}

ordered_json model_card(const ServerContext& ctx, const Backend& b) {
  const ModelInfo& i = b.engine->info();
  const EngineOptions& o = b.engine->options();
  // Where drafts come from: the draft model, prompt lookup, or none (plain steps; a request's
  // prediction is verified whatever this says).
  const char* speculate = drafts(o.decoding) ? speculate_name(o.decoding.speculate) : "none";
  ordered_json settings{{"mode", b.mode},
                        {"speculate", speculate},
                        {"draft_tokens", b.draft_tokens == "auto" ? ordered_json("auto") : ordered_json(std::stoll(b.draft_tokens))},
                        {"batch", o.decoding.batch_size},
                        // live sequences at most: in place the KV slots, in exspec the window
                        {o.decoding.mode == Mode::InPlace ? "slots" : "window", live_sequences(o.decoding)},
                        // the longest sequence (prompt + max_tokens) a request may ask for
                        {"context", o.decoding.context > 0 ? o.decoding.context : i.max_position_embeddings},
                        {"dtype", i.dtype},
                        {"device", i.device},
                        // a --chat-template file by its name only, as the draft below
                        {"chat_template", b.chat ? json(std::filesystem::path(b.chat->source).filename().string()) : json(nullptr)},
                        {"tool_call_parser", b.chat ? json(tool_format_name(b.chat->tool_format)) : json(nullptr)}};
  ordered_json draft = nullptr;
  // Names, not paths: a client never learns the server's file system (the log has the paths).
  if (!i.draft_dir.empty()) draft = ordered_json{{"name", model_label(i.draft_dir)}, {"parameters", i.draft_parameters}};
  return ordered_json{{"id", b.served_name},
                      {"object", "model"},
                      {"created", ctx.started_unix},
                      {"owned_by", "exspec"},
                      {"root", b.served_name},
                      {"max_model_len", i.max_position_embeddings},
                      {"architecture", i.architecture},
                      {"parameters", i.num_parameters},
                      {"draft", draft},
                      {"settings", settings}};
}

std::string endpoint_of(const std::string& path) {
  for (const char* e : {"/v1/completions", "/v1/chat/completions", "/v1/models", "/health", "/metrics"})
    if (path == e) return e;
  if (path.rfind("/v1/models/", 0) == 0) return "/v1/models/{id}";
  if (path == "/v1/files" || path == "/v1/batches" || path == "/tokenize" || path == "/detokenize") return path;
  if (path.rfind("/v1/files/", 0) == 0) return "/v1/files/{id}";
  if (path.rfind("/v1/batches/", 0) == 0) return "/v1/batches/{id}";
  return "other";
}

}  // namespace

Routed route_request(ServerContext& ctx, const Request& req, std::function<void(std::function<void()>)> post,
                     std::weak_ptr<GenerationOutput> out, std::chrono::steady_clock::time_point received) {
  Routed r;
  std::string path(req.target());
  if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
  r.endpoint = endpoint_of(path);
  const bool ka = req.keep_alive() && ctx.state.load() != ServerState::Draining;
  const unsigned v = req.version();
  try {
    if (path == "/health") {
      need_method(req, bhttp::verb::get, "GET");
      switch (ctx.state.load()) {
        case ServerState::Ready: {
          ordered_json h{{"status", "ok"}, {"model", ctx.backend.load()->served_name}};
          if (!ctx.cfg.replica.empty()) h["replica"] = ctx.cfg.replica;  // which replica a balancer reached
          r.response = json_response(200, h.dump(), v, ka);
          break;
        }
        case ServerState::Loading: r.response = json_response(503, R"({"status":"loading"})", v, ka); break;
        case ServerState::Draining: r.response = json_response(503, R"({"status":"shutting_down"})", v, ka); break;
        default: r.response = json_response(503, R"({"status":"failed"})", v, ka);
      }
    } else if (path == "/metrics") {
      need_method(req, bhttp::verb::get, "GET");
      Backend* b = ctx.state.load() == ServerState::Ready ? ctx.backend.load() : nullptr;
      EngineStats st;
      if (b) st = ctx.keeper.call([b] { return b->engine->stats(); });
      std::string text = b ? ctx.metrics.render(&st, &b->engine->info(), b->served_name, b->mode,
                                                b->draft_tokens, ctx.inflight.load())
                           : ctx.metrics.render(nullptr, nullptr, "", "", "", ctx.inflight.load());
      if (!ctx.cfg.replica.empty()) text = with_label(text, "replica", ctx.cfg.replica);
      r.response = json_response(200, text, v, ka);
      r.response->set(bhttp::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    } else if (path == "/v1/models" || path.rfind("/v1/models/", 0) == 0) {
      need_method(req, bhttp::verb::get, "GET");
      need_auth(ctx, req);
      Backend& b = need_ready(ctx);
      if (path == "/v1/models") {
        r.response = json_response(
            200, ordered_json{{"object", "list"}, {"data", ordered_json::array({model_card(ctx, b)})}}.dump(), v, ka);
      } else {
        const std::string id = path.substr(std::string("/v1/models/").size());
        bool known = false;
        for (const auto& n : b.facts.model_names) known = known || n == id;
        if (!known) throw ApiError(404, "The model '" + id + "' does not exist", "model", "model_not_found");
        r.response = json_response(200, model_card(ctx, b).dump(), v, ka);
      }
    } else if (path == "/v1/completions" || path == "/v1/chat/completions") {
      need_method(req, bhttp::verb::post, "POST");
      need_auth(ctx, req);
      Backend& b = need_ready(ctx);
      const json body = parse_json_body(req.body());
      const bool chat = path == "/v1/chat/completions";
      GenRequest g = chat ? parse_chat_request(body, b.facts) : parse_completion_request(body, b.facts);
      auto gen = std::make_shared<Generation>(std::move(g), generation_env(ctx, b, std::move(post), 1),
                                              std::move(out), received);
      gen->start();
      r.generation = std::move(gen);
    } else if (path == "/tokenize" || path == "/detokenize") {
      need_auth(ctx, req);
      r.response = tokenize_api(need_ready(ctx), req, path, ka);
    } else if (path == "/v1/files" || path.rfind("/v1/files/", 0) == 0) {
      need_auth(ctx, req);
      r.response = files_api(ctx, req, path, ka);
    } else if (path == "/v1/batches" || path.rfind("/v1/batches/", 0) == 0) {
      need_auth(ctx, req);
      r.response = batches_api(ctx, req, path, std::string(req.target()), ka);
    } else {
      throw ApiError(404, "no such endpoint: " + std::string(req.method_string()) + " " + path +
                              " (served: POST /v1/completions, POST /v1/chat/completions, GET /v1/models, GET /health, "
                              "GET /metrics, /v1/files, /v1/batches, POST /tokenize, POST /detokenize)", "", "not_found");
    }
  } catch (const ApiError& e) {
    r.generation.reset();
    r.response = error_response(e, v, ka);
  } catch (const nlohmann::json::exception& e) {  // a client value of a type no check expected
    r.generation.reset();
    r.response = error_response(json_value_error(e), v, ka);
  } catch (const std::exception& e) {
    r.generation.reset();
    r.response = error_response(ApiError(500, std::string("internal error: ") + e.what(), "", "internal_error"), v, ka);
  }
  if (r.response && req.method() == bhttp::verb::head) r.response->body().clear();
  return r;
}

}  // namespace exspec::http
