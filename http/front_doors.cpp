#include "http/front_doors.h"

#include <iostream>

#include "http/json_body.h"
#include "http/messages_output.h"
#include "http/messages_request.h"
#include "http/responses_output.h"
#include "http/responses_request.h"
#include "jobs/job_store.h"

namespace exspec::http {

using nlohmann::ordered_json;

namespace {

jobs::JobStore& need_responses(ServerContext& ctx) {
  if (!ctx.jobs)
    throw ApiError(404, "stored responses need a job store: start the server with --data-dir DIR, or a shared store "
                        "with --job-store postgresql://...", "", "not_found");
  return *ctx.jobs;
}

// The conversation a stored response ended, which previous_response_id continues.
ordered_json previous_conversation(ServerContext& ctx, const std::string& id) {
  if (!ctx.jobs)
    throw bad_param("previous_response_id", "previous_response_id: this server keeps no responses (it has no job "
                                            "store: --data-dir or --job-store)", "unsupported_value");
  const std::optional<jobs::ResponseRec> rec = ctx.jobs->response(id);
  if (!rec) throw ApiError(404, "Previous response with id '" + id + "' not found.", "previous_response_id", "not_found");
  return ordered_json::parse(rec->conversation);
}

// The answer as the chat message it is in a continuation's history.
ordered_json assistant_message(const ChatAnswer& a) {
  const bool content_null = !a.calls.empty() && a.text.empty();
  ordered_json m{{"role", "assistant"}, {"content", content_null ? ordered_json(nullptr) : ordered_json(a.text)}};
  for (const auto& c : a.calls) {
    if (!m.contains("tool_calls")) m["tool_calls"] = ordered_json::array();
    m["tool_calls"].push_back(
        {{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  }
  return m;
}

// Keeps the finished response and its conversation (a failure to keep it is logged: the client
// has its answer either way).
ResponseDone keeper(jobs::JobStore* store, ordered_json conversation) {
  return [store, conversation = std::move(conversation)](const ordered_json& response, const ChatAnswer& a) {
    ordered_json conv = conversation;
    conv.push_back(assistant_message(a));
    const std::string id = response["id"].get<std::string>();
    try {
      store->add_response({id, response["created_at"].get<int64_t>(), dump(response), dump(conv)});
    } catch (const std::exception& e) {
      std::cerr << "exspec serve: could not store response " << id << ": " << e.what() << "\n";
    }
  };
}

}  // namespace

void create_message(const Call& c, Routed& r) {
  Backend& b = need_ready(c.ctx);
  MessagesRequest m = messages_to_chat(parse_json_body(c.req.body()), false);
  GenRequest g = parse_chat_request(m.chat, deferred_facts(b));
  g.report_stop = true;  // for stop_reason "stop_sequence" and its stop_sequence
  const auto input_tokens = static_cast<int64_t>(g.prompts.at(0).ids.size());
  start_generation(c, r, b, std::move(g), messages_output(c.out, b.served_name, input_tokens, std::move(m.stop_sequences)));
}

void count_message_tokens(const Call& c, Routed& r) {
  Backend& b = need_ready(c.ctx);
  const MessagesRequest m = messages_to_chat(parse_json_body(c.req.body()), true);
  const GenRequest g = parse_chat_request(m.chat, deferred_facts(b));
  r.response = c.json(200, ordered_json{{"input_tokens", g.prompts.at(0).ids.size()}}.dump());
}

void create_response(const Call& c, Routed& r) {
  Backend& b = need_ready(c.ctx);
  ResponsesRequest q = responses_to_chat(parse_json_body(c.req.body()));
  // Kept by default, as OpenAI keeps them, where the server has a job store to keep them in.
  const bool keep = q.store.value_or(c.ctx.jobs != nullptr);
  if (keep && !c.ctx.jobs)
    throw bad_param("store", "store: keeping responses needs a job store (--data-dir or --job-store); send store false",
                    "unsupported_value");
  ordered_json history = ordered_json::array();
  if (!q.previous_response_id.empty()) history = previous_conversation(c.ctx, q.previous_response_id);
  continue_from(q, history);
  GenRequest g;
  try {
    g = parse_chat_request(q.chat, deferred_facts(b));
  } catch (const ApiError& e) {
    throw responses_error(e);
  }
  const auto input_tokens = static_cast<int64_t>(g.prompts.at(0).ids.size());
  q.echo["store"] = keep;
  ResponseDone done;
  if (keep) {
    for (const auto& m : q.input) history.push_back(m);
    done = keeper(c.ctx.jobs, std::move(history));
  }
  start_generation(c, r, b, std::move(g),
                   responses_output(c.out, b.served_name, std::move(q.echo), input_tokens, std::move(done)));
}

Response get_stored_response(const Call& c) {
  const std::string& id = c.params.at(0);
  const std::optional<jobs::ResponseRec> rec = need_responses(c.ctx).response(id);
  if (!rec) throw ApiError(404, "No response found with id '" + id + "'.", "", "not_found");
  return c.json(200, rec->body);
}

Response delete_stored_response(const Call& c) {
  const std::string& id = c.params.at(0);
  if (!need_responses(c.ctx).delete_response(id))
    throw ApiError(404, "No response found with id '" + id + "'.", "", "not_found");
  return c.json(200, ordered_json{{"id", id}, {"object", "response"}, {"deleted", true}}.dump());
}

}  // namespace exspec::http
