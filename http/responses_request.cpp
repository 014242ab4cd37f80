#include "http/responses_request.h"

#include <set>

#include "http/api_error.h"
#include "http/dialect_fields.h"
#include "http/json_body.h"

namespace exspec::http {
namespace {

using nlohmann::ordered_json;

constexpr bool kDotted = false;  // OpenAI names fields input[0].content[1]

void check_fields(const ordered_json& body) {
  static const std::set<std::string> served{"model", "input", "instructions", "max_output_tokens", "temperature",
                                            "top_p", "seed", "metadata", "tools", "tool_choice", "parallel_tool_calls",
                                            "text", "stream", "store", "user", "truncation", "include",
                                            "safety_identifier", "prompt_cache_key", "previous_response_id"};
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (!served.count(it.key()) && !it->is_null()) refuse(it.key(), "not supported by this server", "unsupported_parameter");
  }
}

// A string, or content parts (input_text, output_text) joined.
std::string text_of(const ordered_json& v, const std::string& at) {
  return joined_text(v, at, kDotted, {"input_text", "output_text"}, {"type", "text", "annotations", "logprobs"});
}

ordered_json message_item(const ordered_json& it, const std::string& at) {
  only_fields(it, at, {"type", "role", "content", "id", "status"});
  const ordered_json& role = need_field(it, "role", at, &ordered_json::is_string, "a string");
  if (role != "user" && role != "assistant" && role != "system" && role != "developer")
    refuse(at + ".role", "must be \"user\", \"assistant\", \"system\" or \"developer\"");
  const ordered_json* content = field(it, "content");
  if (!content) refuse(at + ".content", "is required", "missing_required_parameter");
  return {{"role", role}, {"content", text_of(*content, at + ".content")}};
}

// A function_call item: a call of the assistant turn before it (a new turn if there is none).
void add_call(const ordered_json& it, const std::string& at, ordered_json& out) {
  only_fields(it, at, {"type", "call_id", "name", "arguments", "id", "status"});
  ordered_json call{{"id", need_field(it, "call_id", at, &ordered_json::is_string, "a string")},
                    {"type", "function"},
                    {"function", {{"name", need_field(it, "name", at, &ordered_json::is_string, "a string")},
                                  {"arguments", need_field(it, "arguments", at, &ordered_json::is_string, "a string")}}}};
  if (out.empty() || out.back()["role"] != "assistant")
    out.push_back({{"role", "assistant"}, {"content", nullptr}, {"tool_calls", ordered_json::array()}});
  if (!out.back().contains("tool_calls")) out.back()["tool_calls"] = ordered_json::array();
  out.back()["tool_calls"].push_back(std::move(call));
}

ordered_json call_output(const ordered_json& it, const std::string& at) {
  only_fields(it, at, {"type", "call_id", "output", "id", "status"});
  const ordered_json& id = need_field(it, "call_id", at, &ordered_json::is_string, "a string");
  const ordered_json* output = field(it, "output");
  if (!output) refuse(at + ".output", "is required", "missing_required_parameter");
  return {{"role", "tool"}, {"tool_call_id", id}, {"content", text_of(*output, at + ".output")}};
}

// The input items as chat messages (the instructions apart).
ordered_json input_messages(const ordered_json& body) {
  ordered_json out = ordered_json::array();
  const ordered_json* input = field(body, "input");
  if (!input) refuse("input", "is required", "missing_required_parameter");
  if (input->is_string()) {
    out.push_back({{"role", "user"}, {"content", *input}});
    return out;
  }
  each_object(*input, "input", kDotted, "a string or an array of input items", [&out](const ordered_json& it, const std::string& at) {
    const ordered_json* t = field(it, "type");
    if (t && !t->is_string()) refuse(at + ".type", "must be a string", "invalid_type");
    const std::string type = t ? t->get<std::string>() : "message";
    if (type == "message") out.push_back(message_item(it, at));
    else if (type == "function_call") add_call(it, at, out);
    else if (type == "function_call_output") out.push_back(call_output(it, at));
    else refuse(at + ".type", "input items of type \"" + type + "\" are not supported (message, function_call, "
                              "function_call_output)", "unsupported_value");
  });
  return out;
}

// Function tools ({type: "function", name, description, parameters, strict}) as chat's; built-in
// tools (web_search, file_search, code_interpreter, mcp, ...) are refused.
ordered_json chat_tools(const ordered_json& tools) {
  ordered_json out = ordered_json::array();
  each_object(tools, "tools", kDotted, "an array", [&out](const ordered_json& t, const std::string& at) {
    const ordered_json& type = need_field(t, "type", at, &ordered_json::is_string, "a string");
    if (type != "function")
      refuse(at + ".type", "tools of type " + type.dump() + " are not supported: this server runs function tools only",
             "unsupported_value");
    only_fields(t, at, {"type", "name", "description", "parameters", "strict"});
    ordered_json fn = t;
    fn.erase("type");
    out.push_back({{"type", "function"}, {"function", std::move(fn)}});
  });
  return out;
}

ordered_json chat_tool_choice(const ordered_json& tc) {
  if (tc.is_string()) return tc;  // none, auto, required: chat's own check
  if (!tc.is_object()) refuse("tool_choice", "must be a string or an object", "invalid_type");
  if (field(tc, "type") == nullptr || tc["type"] != "function")
    refuse("tool_choice.type", "only \"function\" (a named function tool) is supported", "unsupported_value");
  only_fields(tc, "tool_choice", {"type", "name"});
  return {{"type", "function"}, {"function", {{"name", need_field(tc, "name", "tool_choice", &ordered_json::is_string, "a string")}}}};
}

// text.format (text, json_schema, json_object) as chat's response_format.
void text_format(const ordered_json& text, ordered_json& chat) {
  if (!text.is_object()) refuse("text", "must be an object", "invalid_type");
  only_fields(text, "text", {"format"});
  const ordered_json* f = field(text, "format");
  if (!f) return;
  if (!f->is_object()) refuse("text.format", "must be an object", "invalid_type");
  const ordered_json& type = need_field(*f, "type", "text.format", &ordered_json::is_string, "a string");
  if (type == "text") {
    only_fields(*f, "text.format", {"type"});
  } else if (type == "json_object") {
    only_fields(*f, "text.format", {"type"});
    chat["response_format"] = {{"type", "json_object"}};
  } else if (type == "json_schema") {
    only_fields(*f, "text.format", {"type", "name", "schema", "strict", "description"});
    ordered_json js = *f;
    js.erase("type");
    chat["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(js)}};
  } else {
    refuse("text.format.type", "must be \"text\", \"json_schema\" or \"json_object\"");
  }
}

void check_metadata(const ordered_json& md) {
  if (!md.is_object()) refuse("metadata", "must be an object", "invalid_type");
  if (md.size() > 16) refuse("metadata", "at most 16 keys");
  for (auto it = md.begin(); it != md.end(); ++it)
    if (!it->is_string() || it.key().size() > 64 || it->get_ref<const std::string&>().size() > 512)
      refuse("metadata." + it.key(), "keys are at most 64 characters, values strings of at most 512");
}

// The fields that only say how the response is kept or named: checked, echoed.
void state_fields(const ordered_json& body, ResponsesRequest& r) {
  if (const ordered_json* s = field(body, "store")) {
    if (!s->is_boolean()) refuse("store", "must be a boolean", "invalid_type");
    r.store = s->get<bool>();
  }
  if (const ordered_json* p = field(body, "previous_response_id")) {
    if (!p->is_string() || p->get_ref<const std::string&>().empty()) refuse("previous_response_id", "must be a response id", "invalid_type");
    r.previous_response_id = p->get<std::string>();
  }
  if (const ordered_json* t = field(body, "truncation"); t && *t != "disabled")
    refuse("truncation", "only \"disabled\" is supported (a prompt over the context is a 400)", "unsupported_value");
  if (const ordered_json* inc = field(body, "include"); inc && (!inc->is_array() || !inc->empty()))
    refuse("include", "no extra output data is supported: send an empty list", "unsupported_value");
  for (const char* f : {"user", "safety_identifier", "prompt_cache_key"})
    if (const ordered_json* v = field(body, f); v && !v->is_string()) refuse(f, "must be a string", "invalid_type");
  if (const ordered_json* md = field(body, "metadata")) check_metadata(*md);
  if (const ordered_json* st = field(body, "stream")) {
    if (!st->is_boolean()) refuse("stream", "must be a boolean", "invalid_type");
    r.stream = st->get<bool>();
  }
}

}  // namespace

ResponsesRequest responses_to_chat(const ordered_json& body) {
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object", "", "invalid_body");
  check_fields(body);
  ResponsesRequest r;
  state_fields(body, r);
  r.chat = ordered_json::object();
  if (const ordered_json* m = field(body, "model")) r.chat["model"] = *m;
  if (const ordered_json* ins = field(body, "instructions")) {
    if (!ins->is_string()) refuse("instructions", "must be a string", "invalid_type");
    r.instructions = {{"role", "system"}, {"content", *ins}};
  }
  r.input = input_messages(body);
  continue_from(r, ordered_json::array());
  if (const ordered_json* t = field(body, "tools")) r.chat["tools"] = chat_tools(*t);
  if (const ordered_json* tc = field(body, "tool_choice")) r.chat["tool_choice"] = chat_tool_choice(*tc);
  if (const ordered_json* p = field(body, "parallel_tool_calls")) r.chat["parallel_tool_calls"] = *p;
  if (const ordered_json* t = field(body, "text")) text_format(*t, r.chat);
  if (const ordered_json* mt = field(body, "max_output_tokens")) r.chat["max_tokens"] = *mt;
  for (const char* f : {"temperature", "top_p", "seed", "user"})
    if (const ordered_json* v = field(body, f)) r.chat[f] = *v;
  if (r.stream) r.chat["stream"] = true, r.chat["stream_options"] = {{"include_usage", true}};
  r.echo = ordered_json::object();
  for (const char* f : {"instructions", "max_output_tokens", "metadata", "temperature", "top_p", "tools", "tool_choice",
                        "parallel_tool_calls", "text", "user", "previous_response_id"})
    r.echo[f] = body.contains(f) ? body[f] : ordered_json(nullptr);
  return r;
}

void continue_from(ResponsesRequest& r, const ordered_json& history) {
  ordered_json messages = ordered_json::array();
  if (!r.instructions.is_null()) messages.push_back(r.instructions);
  for (const auto& m : history) messages.push_back(m);
  for (const auto& m : r.input) messages.push_back(m);
  r.chat["messages"] = std::move(messages);
}

namespace {

std::string responses_param(const std::string& p) {
  auto starts = [&p](const char* s) { return p.rfind(s, 0) == 0; };
  if (p == "max_tokens") return "max_output_tokens";
  if (starts("messages")) return "input";
  if (starts("response_format.json_schema")) return "text.format" + p.substr(27);
  if (starts("response_format")) return "text.format" + p.substr(15);
  if (starts("tool_choice.function")) return "tool_choice" + p.substr(20);
  const size_t f = p.find("].function");
  if (starts("tools[") && f != std::string::npos) return p.substr(0, f + 1) + p.substr(f + 10);
  return p;
}

}  // namespace

ApiError responses_error(const ApiError& e) {
  const std::string param = responses_param(e.param());
  std::string message = e.what();
  if (param != e.param())
    for (size_t at = message.find(e.param()); at != std::string::npos; at = message.find(e.param(), at + param.size()))
      message.replace(at, e.param().size(), param);
  return ApiError(e.status(), message, param, e.code(), e.type());
}

}  // namespace exspec::http
