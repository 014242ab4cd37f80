#include "http/routes.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "http/front_doors.h"
#include "http/jobs_api.h"
#include "http/json_body.h"
#include "http/safe_text.h"
#include "http/tokenize_api.h"
#include "http/web_page.h"

namespace exspec::http {
namespace bhttp = boost::beast::http;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// The key as a bearer token (OpenAI's clients) or in x-api-key (Anthropic's).
void need_auth(const ServerContext& ctx, const Request& req) {
  if (ctx.cfg.api_key.empty()) return;
  auto it = req.find(bhttp::field::authorization);
  auto x = req.find("x-api-key");
  if (it == req.end() && x == req.end())
    throw ApiError(401, "You didn't provide an API key. Send it as 'Authorization: Bearer KEY' or 'x-api-key: KEY'.",
                   "", "invalid_api_key");
  const bool bearer_ok = it != req.end() && constant_time_equal(it->value(), "Bearer " + ctx.cfg.api_key);
  const bool x_ok = x != req.end() && constant_time_equal(x->value(), ctx.cfg.api_key);
  if (!bearer_ok && !x_ok) throw ApiError(401, "Incorrect API key provided.", "", "invalid_api_key");
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
                        {"tool_call_parser", b.chat ? json(chat::tool_format_name(b.chat->tool_format)) : json(nullptr)},
                        {"generation_config", ctx.cfg.generation_config},
                        // what a request that leaves a sampling field out gets (an extension, as vLLM logs it)
                        {"generation_defaults", ordered_json::parse(b.facts.defaults.to_json_text())}};
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

Response health(const Call& c) {
  switch (c.ctx.state.load()) {
    case ServerState::Ready: {
      ordered_json h{{"status", "ok"}, {"model", c.ctx.backend.load()->served_name}};
      if (!c.ctx.cfg.replica.empty()) h["replica"] = c.ctx.cfg.replica;  // which replica a balancer reached
      return c.json(200, h.dump());
    }
    case ServerState::Loading: return c.json(503, R"({"status":"loading"})");
    case ServerState::Draining: return c.json(503, R"({"status":"shutting_down"})");
    default: return c.json(503, R"({"status":"failed"})");
  }
}

Response metrics(const Call& c) {
  ServerContext& ctx = c.ctx;
  Backend* b = ctx.state.load() == ServerState::Ready ? ctx.backend.load() : nullptr;
  EngineStats st;
  if (b) st = ctx.keeper.call([b] { return b->engine->stats(); });
  std::string text = b ? ctx.metrics.render(&st, &b->engine->info(), b->served_name, b->mode, b->draft_tokens,
                                            ctx.inflight.load())
                       : ctx.metrics.render(nullptr, nullptr, "", "", "", ctx.inflight.load());
  if (b && b->grammars) text += grammar_cache_metrics(b->grammars->stats());
  if (!ctx.cfg.replica.empty()) text = with_label(text, "replica", ctx.cfg.replica);
  Response r = c.json(200, text);
  r.set(bhttp::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
  return r;
}

// The chat page. Open like /health: it holds no data, and asks for the API key itself. Its
// Content-Security-Policy lets it load nothing from elsewhere, and talk to this server only.
Response page(const Call& c) {
  if (!c.ctx.cfg.web_page)
    throw ApiError(404, "no such endpoint: GET / (the chat page is off: --no-web-page)", "", "not_found");
  Response r = c.json(200, std::string(web_page()));
  r.set(bhttp::field::content_type, "text/html; charset=utf-8");
  r.set(bhttp::field::cache_control, "no-cache");
  r.set("Content-Security-Policy",
        "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; "
        "frame-ancestors 'none'");
  r.set("X-Content-Type-Options", "nosniff");
  return r;
}

Response list_models(const Call& c) {
  Backend& b = need_ready(c.ctx);
  return c.json(200, ordered_json{{"object", "list"}, {"data", ordered_json::array({model_card(c.ctx, b)})}}.dump());
}

Response get_model(const Call& c) {
  Backend& b = need_ready(c.ctx);
  const std::string& id = c.params.at(0);
  bool known = false;
  for (const auto& n : b.facts.model_names) known = known || n == id;
  if (!known) throw ApiError(404, "The model '" + id + "' does not exist", "model", "model_not_found");
  return c.json(200, model_card(c.ctx, b).dump());
}

// The grammar compiles on the grammar pool, not on this connection thread: the connection keeps
// watching its socket meanwhile, and a client that goes away cancels the compile.
template <bool chat>
void generate(const Call& c, Routed& r) {
  Backend& b = need_ready(c.ctx);
  const ordered_json body = parse_json_body(c.req.body());
  const ModelFacts facts = deferred_facts(b);
  start_generation(c, r, b, chat ? parse_chat_request(body, facts) : parse_completion_request(body, facts));
}

template <Response (*handler)(const Call&)>
void answer(const Call& c, Routed& r) {
  r.response = handler(c);
}

constexpr bool kOpen = false, kAuth = true;
using V = bhttp::verb;

}  // namespace

const std::vector<Route>& route_table() {
  static const std::vector<Route> table{
      {V::get, "/", kOpen, BodyLimit::Request, answer<page>},  // the chat page (--no-web-page: 404)
      {V::get, "/health", kOpen, BodyLimit::Request, answer<health>},
      {V::get, "/metrics", kOpen, BodyLimit::Request, answer<metrics>},
      {V::get, "/v1/models", kAuth, BodyLimit::Request, answer<list_models>},
      // the served name, or the model's directory path (slashes and all)
      {V::get, "/v1/models/{id...}", kAuth, BodyLimit::Request, answer<get_model>},
      {V::post, "/v1/completions", kAuth, BodyLimit::Request, generate<false>},
      {V::post, "/v1/chat/completions", kAuth, BodyLimit::Request, generate<true>},
      // Anthropic's Messages API and OpenAI's Responses API over the chat path (http/front_doors.h)
      {V::post, "/v1/messages", kAuth, BodyLimit::Request, create_message},
      {V::post, "/v1/messages/count_tokens", kAuth, BodyLimit::Request, count_message_tokens},
      {V::post, "/v1/responses", kAuth, BodyLimit::Request, create_response},
      {V::get, "/v1/responses/{id}", kAuth, BodyLimit::Request, answer<get_stored_response>},
      {V::delete_, "/v1/responses/{id}", kAuth, BodyLimit::Request, answer<delete_stored_response>},
      {V::post, "/tokenize", kAuth, BodyLimit::Request, answer<tokenize_request>},
      {V::post, "/detokenize", kAuth, BodyLimit::Request, answer<detokenize_request>},
      {V::get, "/v1/files", kAuth, BodyLimit::Request, answer<list_files>},
      {V::post, "/v1/files", kAuth, BodyLimit::Upload, answer<upload_file>},
      {V::get, "/v1/files/{id}", kAuth, BodyLimit::Request, answer<get_file>},
      {V::delete_, "/v1/files/{id}", kAuth, BodyLimit::Request, answer<delete_file>},
      {V::get, "/v1/files/{id}/content", kAuth, BodyLimit::Request, answer<file_content>},
      {V::get, "/v1/batches", kAuth, BodyLimit::Request, answer<list_batches>},
      {V::post, "/v1/batches", kAuth, BodyLimit::Request, answer<create_batch>},
      {V::get, "/v1/batches/{id}", kAuth, BodyLimit::Request, answer<get_batch>},
      {V::post, "/v1/batches/{id}/cancel", kAuth, BodyLimit::Request, answer<cancel_batch>},
  };
  return table;
}

namespace {

// The routes of a target's path: the one for the request's method (GET's for HEAD), and the
// methods the path has (for 405's Allow). No route at all: an unknown path.
struct Found {
  const Route* route = nullptr;
  const char* pattern = nullptr;  // of any route of the path
  std::vector<std::string> params;
  std::string allow;
};

Found find_route(const std::optional<Target>& target, bhttp::verb method) {
  Found f;
  if (!target) return f;
  std::vector<std::string> params;
  for (const Route& r : route_table()) {
    if (!match_pattern(r.pattern, target->segments, params)) continue;
    f.pattern = r.pattern;
    const std::string name(bhttp::to_string(r.method));
    f.allow += (f.allow.empty() ? "" : ", ") + name + (r.method == bhttp::verb::get ? ", HEAD" : "");
    if (!f.route && (r.method == method || (r.method == bhttp::verb::get && method == bhttp::verb::head))) {
      f.route = &r;
      f.params = params;
    }
  }
  return f;
}

std::string served_list() {
  std::string out;
  for (const Route& r : route_table())
    out += (out.empty() ? "" : ", ") + std::string(bhttp::to_string(r.method)) + " " + pattern_label(r.pattern);
  return out;
}

}  // namespace

uint64_t body_limit_for(const Limits& lim, const Request& head) {
  const Found f = find_route(parse_target(std::string(head.target())), head.method());
  if (f.route && f.route->body == BodyLimit::Upload) return std::max<uint64_t>(lim.max_body_bytes, lim.max_file_bytes);
  return lim.max_body_bytes;
}

Routed route_request(ServerContext& ctx, const Request& req, std::function<void(std::function<void()>)> post,
                     std::weak_ptr<GenerationOutput> out, std::chrono::steady_clock::time_point received) {
  Routed r;
  const bool ka = req.keep_alive() && ctx.state.load() != ServerState::Draining;
  const unsigned v = req.version();
  const std::optional<Target> target = parse_target(std::string(req.target()));
  Found f = find_route(target, req.method());
  r.endpoint = f.pattern ? pattern_label(f.pattern) : "other";
  const std::string pattern = f.pattern ? f.pattern : "";
  auto error_response = [&pattern](const ApiError& e, unsigned version, bool keep_alive) {
    return error_response_for(pattern, e, version, keep_alive);
  };
  try {
    if (!f.pattern) {
      std::string path(req.target());
      path = target ? target->path : path.substr(0, path.find('?'));
      throw ApiError(404, "no such endpoint: " + std::string(req.method_string()) + " " + path + " (served: " +
                              served_list() + ")", "", "not_found");
    }
    if (!f.route) {
      r.response = error_response(ApiError(405, "method " + std::string(req.method_string()) +
                                                    " is not allowed here; use " + f.allow, "", "method_not_allowed"),
                                  v, ka);
      r.response->set(bhttp::field::allow, f.allow);
    } else {
      if (f.route->auth) need_auth(ctx, req);
      const Call call{ctx, req, *target, std::move(f.params), ka, std::move(post), std::move(out), received};
      f.route->handle(call, r);
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
