#include "http/front_doors.h"

#include "http/json_body.h"
#include "http/messages_output.h"
#include "http/messages_request.h"
#include "http/responses_output.h"
#include "http/responses_request.h"

namespace exspec::http {

using nlohmann::ordered_json;

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
  GenRequest g;
  try {
    g = parse_chat_request(q.chat, deferred_facts(b));
  } catch (const ApiError& e) {
    throw responses_error(e);
  }
  const auto input_tokens = static_cast<int64_t>(g.prompts.at(0).ids.size());
  start_generation(c, r, b, std::move(g), responses_output(c.out, b.served_name, std::move(q.echo), input_tokens));
}

}  // namespace exspec::http
