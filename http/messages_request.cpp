#include "http/messages_request.h"

#include <set>

#include "http/api_error.h"
#include "http/dialect_fields.h"
#include "http/json_body.h"

namespace exspec::http {
namespace {

using nlohmann::ordered_json;

constexpr bool kDotted = true;  // Anthropic names fields messages.0.content.1

// The top-level fields: Anthropic's that are served, those refused by name, and no others.
void check_fields(const ordered_json& body, bool count_tokens) {
  static const std::set<std::string> create{"model", "messages", "system", "max_tokens", "stop_sequences", "temperature",
                                            "top_p", "top_k", "tools", "tool_choice", "stream", "metadata"};
  static const std::set<std::string> counted{"model", "messages", "system", "tools", "tool_choice"};
  static const std::set<std::string> refused{"thinking", "container", "mcp_servers", "service_tier",
                                             "context_management", "inference_geo"};
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (refused.count(it.key())) refuse(it.key(), "not supported by this server", "unsupported_value");
    if (!(count_tokens ? counted : create).count(it.key())) refuse(it.key(), "Extra inputs are not permitted", "unknown_parameter");
  }
}

const std::string& block_type(const ordered_json& b, const std::string& at) {
  const ordered_json* t = field(b, "type");
  if (!t || !t->is_string()) refuse(at + ".type", "must be a string", "invalid_type");
  return t->get_ref<const std::string&>();
}

[[noreturn]] void refuse_block(const std::string& type, const std::string& at) {
  refuse(at + ".type", "content blocks of type \"" + type + "\" are not supported (text, tool_use, tool_result)",
      "unsupported_value");
}

// A string, or text blocks joined. cache_control and citations (hints of Anthropic's own) are
// allowed and change nothing here: the prefix cache reuses shared prompt prefixes by itself.
std::string text_of(const ordered_json& v, const std::string& at) {
  return joined_text(v, at, kDotted, {"text"}, {"type", "text", "cache_control", "citations"});
}

ordered_json tool_result(const ordered_json& b, const std::string& at) {
  only_fields(b, at, {"type", "tool_use_id", "content", "is_error", "cache_control"});
  const ordered_json& id = need_field(b, "tool_use_id", at, &ordered_json::is_string, "a string");
  if (const ordered_json* e = field(b, "is_error"); e && !e->is_boolean()) refuse(at + ".is_error", "must be a boolean", "invalid_type");
  const ordered_json* c = field(b, "content");
  return ordered_json{{"role", "tool"}, {"tool_call_id", id}, {"content", c ? text_of(*c, at + ".content") : ""}};
}

// A user turn: its text blocks as user messages, its tool_result blocks as tool messages, in order.
void add_user(const ordered_json& content, const std::string& at, ordered_json& out) {
  if (!content.is_array()) {
    out.push_back({{"role", "user"}, {"content", text_of(content, at)}});
    return;
  }
  std::string text;
  bool has_text = false;
  auto flush = [&] {
    if (has_text) out.push_back({{"role", "user"}, {"content", text}});
    text.clear(), has_text = false;
  };
  each_object(content, at, kDotted, "an array", [&](const ordered_json& b, const std::string& bj) {
    const std::string& type = block_type(b, bj);
    if (type == "text") {
      text += text_of(ordered_json::array({b}), at), has_text = true;
    } else if (type == "tool_result") {
      flush();
      out.push_back(tool_result(b, bj));
    } else {
      refuse_block(type, bj);
    }
  });
  flush();
}

// An assistant turn: text blocks as its content, tool_use blocks as its tool_calls.
void add_assistant(const ordered_json& content, const std::string& at, ordered_json& out) {
  if (!content.is_array()) {
    out.push_back({{"role", "assistant"}, {"content", text_of(content, at)}});
    return;
  }
  std::string text;
  ordered_json calls = ordered_json::array();
  each_object(content, at, kDotted, "an array", [&](const ordered_json& b, const std::string& bj) {
    const std::string& type = block_type(b, bj);
    if (type == "text") {
      text += text_of(ordered_json::array({b}), at);
    } else if (type == "tool_use") {
      only_fields(b, bj, {"type", "id", "name", "input", "cache_control"});
      const ordered_json& id = need_field(b, "id", bj, &ordered_json::is_string, "a string");
      const ordered_json& name = need_field(b, "name", bj, &ordered_json::is_string, "a string");
      const ordered_json& input = need_field(b, "input", bj, &ordered_json::is_object, "an object");
      calls.push_back({{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", input.dump()}}}});
    } else {
      refuse_block(type, bj);
    }
  });
  const bool content_null = !calls.empty() && text.empty();
  ordered_json m{{"role", "assistant"}, {"content", content_null ? ordered_json(nullptr) : ordered_json(text)}};
  if (!calls.empty()) m["tool_calls"] = std::move(calls);
  out.push_back(std::move(m));
}

ordered_json chat_messages(const ordered_json& body) {
  ordered_json out = ordered_json::array();
  if (const ordered_json* s = field(body, "system")) out.push_back({{"role", "system"}, {"content", text_of(*s, "system")}});
  const ordered_json* msgs = field(body, "messages");
  if (!msgs) refuse("messages", "Field required", "missing_required_parameter");
  if (msgs->is_array() && msgs->empty()) refuse("messages", "at least one message is required");
  each_object(*msgs, "messages", kDotted, "an array", [&out](const ordered_json& m, const std::string& at) {
    only_fields(m, at, {"role", "content"});
    const ordered_json& role = need_field(m, "role", at, &ordered_json::is_string, "a string");
    const ordered_json* content = field(m, "content");
    if (!content) refuse(at + ".content", "Field required", "missing_required_parameter");
    if (role == "user") add_user(*content, at + ".content", out);
    else if (role == "assistant") add_assistant(*content, at + ".content", out);
    else refuse(at + ".role", "must be \"user\" or \"assistant\"");
  });
  if (msgs->back()["role"] == "assistant")
    refuse("messages." + std::to_string(msgs->size() - 1),
           "a final assistant message (a prefill to continue) is not supported: end with a user message", "unsupported_value");
  return out;
}

// tools: custom tools ({name, description, input_schema}) as chat's function tools; Anthropic's
// server and client tools of other types (bash, web_search, ...) are refused.
ordered_json chat_tools(const ordered_json& tools) {
  ordered_json out = ordered_json::array();
  each_object(tools, "tools", kDotted, "an array", [&out](const ordered_json& t, const std::string& at) {
    if (const ordered_json* ty = field(t, "type"); ty && *ty != "custom")
      refuse(at + ".type", "tools of type " + ty->dump() + " are not supported; only custom tools ({name, description, "
                           "input_schema})", "unsupported_value");
    only_fields(t, at, {"type", "name", "description", "input_schema", "cache_control"});
    ordered_json fn{{"name", need_field(t, "name", at, &ordered_json::is_string, "a string")}};
    if (const ordered_json* d = field(t, "description")) fn["description"] = *d;
    fn["parameters"] = need_field(t, "input_schema", at, &ordered_json::is_object, "an object");
    out.push_back({{"type", "function"}, {"function", std::move(fn)}});
  });
  return out;
}

// tool_choice {type: auto | any | tool | none, name, disable_parallel_tool_use} as chat's.
void chat_tool_choice(const ordered_json& tc, ordered_json& chat) {
  if (!tc.is_object()) refuse("tool_choice", "must be an object", "invalid_type");
  only_fields(tc, "tool_choice", {"type", "name", "disable_parallel_tool_use"});
  const std::string type = need_field(tc, "type", "tool_choice", &ordered_json::is_string, "a string").get<std::string>();
  if (type == "auto") chat["tool_choice"] = "auto";
  else if (type == "any") chat["tool_choice"] = "required";
  else if (type == "none") chat["tool_choice"] = "none";
  else if (type == "tool")
    chat["tool_choice"] = {{"type", "function"},
                           {"function", {{"name", need_field(tc, "name", "tool_choice", &ordered_json::is_string, "a string")}}}};
  else refuse("tool_choice.type", "must be \"auto\", \"any\", \"tool\" or \"none\"");
  if (const ordered_json* p = field(tc, "disable_parallel_tool_use")) {
    if (!p->is_boolean()) refuse("tool_choice.disable_parallel_tool_use", "must be a boolean", "invalid_type");
    chat["parallel_tool_calls"] = !p->get<bool>();
  }
}

// The sampling and length fields: max_tokens (required), stop_sequences, temperature, top_p,
// top_k, stream; metadata.user_id (an id of the caller) is checked and not used.
void sampling_fields(const ordered_json& body, MessagesRequest& r) {
  const ordered_json* mt = field(body, "max_tokens");
  if (!mt) refuse("max_tokens", "Field required", "missing_required_parameter");
  if (!mt->is_number_integer()) refuse("max_tokens", "must be an integer", "invalid_type");
  if (mt->get<int64_t>() < 1) refuse("max_tokens", "must be greater than or equal to 1");
  r.chat["max_tokens"] = *mt;
  if (const ordered_json* s = field(body, "stop_sequences")) {
    if (!s->is_array()) refuse("stop_sequences", "must be an array of strings", "invalid_type");
    for (const auto& v : *s) {
      if (!v.is_string()) refuse("stop_sequences", "must be an array of strings", "invalid_type");
      r.stop_sequences.push_back(v.get<std::string>());
    }
    if (!s->empty()) r.chat["stop"] = *s;
  }
  for (const char* f : {"temperature", "top_p", "top_k"})
    if (const ordered_json* v = field(body, f)) r.chat[f] = *v;
  if (const ordered_json* md = field(body, "metadata")) {
    if (!md->is_object()) refuse("metadata", "must be an object", "invalid_type");
    only_fields(*md, "metadata", {"user_id"});
    if (const ordered_json* u = field(*md, "user_id"); u && !u->is_string()) refuse("metadata.user_id", "must be a string", "invalid_type");
  }
  if (const ordered_json* st = field(body, "stream")) {
    if (!st->is_boolean()) refuse("stream", "must be a boolean", "invalid_type");
    r.stream = st->get<bool>();
  }
  if (r.stream) r.chat["stream"] = true, r.chat["stream_options"] = {{"include_usage", true}};
}

}  // namespace

MessagesRequest messages_to_chat(const ordered_json& body, bool count_tokens) {
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object", "", "invalid_body");
  check_fields(body, count_tokens);
  MessagesRequest r;
  r.chat = ordered_json::object();
  if (const ordered_json* m = field(body, "model")) r.chat["model"] = *m;
  r.chat["messages"] = chat_messages(body);
  if (const ordered_json* t = field(body, "tools")) r.chat["tools"] = chat_tools(*t);
  if (const ordered_json* tc = field(body, "tool_choice")) chat_tool_choice(*tc, r.chat);
  if (!count_tokens) sampling_fields(body, r);
  return r;
}

}  // namespace exspec::http
