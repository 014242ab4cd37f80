#include "http/chat_request.h"

#include "http/api_error.h"
#include "http/json_body.h"

namespace exspec::http {
namespace {

using nlohmann::ordered_json;

// A string, or text parts joined; `null_ok`: absent / null stays null.
ordered_json content_of(const ordered_json& m, const std::string& at, bool null_ok) {
  const ordered_json* c = field(m, "content");
  if (!c) {
    if (null_ok) return nullptr;
    throw bad_param(at + ".content", at + ".content is required", "missing_required_parameter");
  }
  if (c->is_string()) return c->get<std::string>();
  if (!c->is_array())
    throw bad_param(at + ".content", at + ".content must be a string or an array of text parts", "invalid_type");
  std::string text;
  for (const auto& part : *c) {
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" || !part.contains("text") ||
        !part["text"].is_string())
      throw bad_param(at + ".content", "only text content parts ({\"type\": \"text\", \"text\": ...}) are supported",
                      "unsupported_value");
    text += part["text"].get<std::string>();
  }
  return text;
}

ordered_json tool_calls_of(const ordered_json& calls, const std::string& at) {
  if (!calls.is_array()) throw bad_param(at, at + " must be an array", "invalid_type");
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string ci = at + "[" + std::to_string(i) + "]";
    const ordered_json& c = calls[i];
    if (!c.is_object()) throw bad_param(ci, ci + " must be an object", "invalid_type");
    only_fields(c, ci, {"id", "type", "function"});
    const std::string id = need_field(c, "id", ci, &ordered_json::is_string, "a string").get<std::string>();
    if (const ordered_json* t = field(c, "type"); t && *t != "function")
      throw bad_param(ci + ".type", ci + ".type must be \"function\"");
    const ordered_json& f = need_field(c, "function", ci, &ordered_json::is_object, "an object");
    only_fields(f, ci + ".function", {"name", "arguments"});
    const std::string name = need_field(f, "name", ci + ".function", &ordered_json::is_string, "a string").get<std::string>();
    const std::string args = need_field(f, "arguments", ci + ".function", &ordered_json::is_string, "a JSON string").get<std::string>();
    ordered_json parsed;
    try {
      parsed = ordered_json::parse(args);  // order kept, as Python's json.loads keeps it
    } catch (const nlohmann::ordered_json::exception&) {
      throw bad_param(ci + ".function.arguments", ci + ".function.arguments must be a JSON object (as text)");
    }
    if (!parsed.is_object())
      throw bad_param(ci + ".function.arguments", ci + ".function.arguments must be a JSON object (as text)");
    out.push_back({{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", parsed}}}});
  }
  return out;
}

}  // namespace

bool valid_function_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

ordered_json parse_chat_messages(const ordered_json& body, const Limits& limits) {
  const ordered_json* msgs = field(body, "messages");
  if (!msgs) throw bad_param("messages", "'messages' is required", "missing_required_parameter");
  if (!msgs->is_array()) throw bad_param("messages", "'messages' must be an array", "invalid_type");
  if (msgs->empty()) throw bad_param("messages", "'messages' must not be empty");
  if (msgs->size() > limits.max_messages)
    throw bad_param("messages", "at most " + std::to_string(limits.max_messages) + " messages per request");
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < msgs->size(); ++i) {
    const ordered_json& mj = (*msgs)[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!mj.is_object()) throw bad_param(at, at + " must be an object", "invalid_type");
    const ordered_json* role = field(mj, "role");
    if (!role || !role->is_string()) throw bad_param(at + ".role", at + ".role must be a string", "invalid_type");
    std::string r = role->get<std::string>();
    if (r == "developer") r = "system";
    ordered_json m{{"role", r}};
    if (r == "system" || r == "user") {
      only_fields(mj, at, {"role", "content", "name"});
      m["content"] = content_of(mj, at, false);
    } else if (r == "assistant") {
      only_fields(mj, at, {"role", "content", "name", "tool_calls", "reasoning_content", "refusal"});
      m["content"] = content_of(mj, at, true);
      if (const ordered_json* rc = field(mj, "reasoning_content")) {
        if (!rc->is_string()) throw bad_param(at + ".reasoning_content", at + ".reasoning_content must be a string", "invalid_type");
        m["reasoning_content"] = *rc;
      }
      if (const ordered_json* tc = field(mj, "tool_calls")) m["tool_calls"] = tool_calls_of(*tc, at + ".tool_calls");
      else if (m["content"].is_null())
        throw bad_param(at + ".content", at + ".content is required unless the message has tool_calls",
                        "missing_required_parameter");
    } else if (r == "tool") {
      only_fields(mj, at, {"role", "content", "tool_call_id", "name"});
      m["tool_call_id"] = need_field(mj, "tool_call_id", at, &ordered_json::is_string, "a string");
      m["content"] = content_of(mj, at, false);
    } else {
      throw bad_param(at + ".role", at + ".role \"" + r + "\" is not supported (system, developer, user, assistant, "
                                                          "tool)", "unsupported_value");
    }
    if (const ordered_json* n = field(mj, "name")) {
      if (!n->is_string()) throw bad_param(at + ".name", at + ".name must be a string", "invalid_type");
      m["name"] = *n;
    }
    out.push_back(std::move(m));
  }
  return out;
}

ChatTools parse_chat_tools(const ordered_json& body) {
  ChatTools t;
  if (const ordered_json* tools = field(body, "tools")) {
    if (!tools->is_array()) throw bad_param("tools", "'tools' must be an array", "invalid_type");
    if (tools->size() > 128) throw bad_param("tools", "at most 128 tools per request");
    if (!tools->empty()) t.tools = ordered_json::array();
    for (size_t i = 0; i < tools->size(); ++i) {
      const std::string at = "tools[" + std::to_string(i) + "]";
      const ordered_json& tj = (*tools)[i];
      if (!tj.is_object()) throw bad_param(at, at + " must be an object", "invalid_type");
      only_fields(tj, at, {"type", "function"});
      if (need_field(tj, "type", at, &ordered_json::is_string, "a string") != "function")
        throw bad_param(at + ".type", at + ".type must be \"function\"", "unsupported_value");
      const ordered_json& f = need_field(tj, "function", at, &ordered_json::is_object, "an object");
      only_fields(f, at + ".function", {"name", "description", "parameters", "strict"});
      const std::string name = need_field(f, "name", at + ".function", &ordered_json::is_string, "a string").get<std::string>();
      if (!valid_function_name(name))
        throw bad_param(at + ".function.name", at + ".function.name must be 1 to 64 of a-z, A-Z, 0-9, _ and -");
      for (const auto& other : t.tools)
        if (other["function"]["name"] == name)
          throw bad_param(at + ".function.name", "two tools are named \"" + name + "\"");
      ordered_json fn{{"name", name}};
      if (const ordered_json* d = field(f, "description")) {
        if (!d->is_string()) throw bad_param(at + ".function.description", at + ".function.description must be a string", "invalid_type");
        fn["description"] = *d;
      }
      if (const ordered_json* p = field(f, "parameters")) {
        if (!p->is_object()) throw bad_param(at + ".function.parameters", at + ".function.parameters must be a JSON schema object", "invalid_type");
        fn["parameters"] = ordered_json(*p);
      }
      if (const ordered_json* s = field(f, "strict")) {
        if (!s->is_boolean()) throw bad_param(at + ".function.strict", at + ".function.strict must be a boolean", "invalid_type");
        fn["strict"] = *s;
      }
      t.tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
    }
  }
  t.choice = t.tools.is_null() ? ToolChoice::None : ToolChoice::Auto;
  if (const ordered_json* tc = field(body, "tool_choice")) {
    if (tc->is_string()) {
      const std::string s = tc->get<std::string>();
      if (s == "none") t.choice = ToolChoice::None;
      else if (s == "auto") t.choice = t.tools.is_null() ? ToolChoice::None : ToolChoice::Auto;
      else if (s == "required") t.choice = ToolChoice::Required;
      else throw bad_param("tool_choice", "tool_choice must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}");
    } else if (tc->is_object()) {
      if (const ordered_json* ty = field(*tc, "type"); !ty || *ty != "function")
        throw bad_param("tool_choice.type", "tool_choice.type must be \"function\"");
      const ordered_json* f = field(*tc, "function");
      if (!f || !f->is_object() || !field(*f, "name") || !(*f)["name"].is_string())
        throw bad_param("tool_choice.function.name", "tool_choice.function.name must be a string", "invalid_type");
      t.choice = ToolChoice::Named;
      t.named = (*f)["name"].get<std::string>();
    } else {
      throw bad_param("tool_choice", "tool_choice must be a string or an object", "invalid_type");
    }
    if ((t.choice == ToolChoice::Required || t.choice == ToolChoice::Named) && t.tools.is_null())
      throw bad_param("tool_choice", "tool_choice \"required\" or a named function needs 'tools'");
    if (t.choice == ToolChoice::Named) {
      bool known = false;
      for (const auto& tool : t.tools) known = known || tool["function"]["name"] == t.named;
      if (!known) throw bad_param("tool_choice.function.name", "tool_choice names \"" + t.named + "\", which is not in 'tools'");
    }
  }
  if (const ordered_json* p = field(body, "parallel_tool_calls")) {
    if (!p->is_boolean()) throw bad_param("parallel_tool_calls", "'parallel_tool_calls' must be a boolean", "invalid_type");
    t.parallel = p->get<bool>();
  }
  return t;
}

ordered_json parse_template_kwargs(const ordered_json& body) {
  const ordered_json* k = field(body, "chat_template_kwargs");
  if (!k) return ordered_json::object();
  if (!k->is_object()) throw bad_param("chat_template_kwargs", "'chat_template_kwargs' must be an object", "invalid_type");
  for (auto it = k->begin(); it != k->end(); ++it)
    for (const char* reserved : {"messages", "tools", "documents", "add_generation_prompt"})
      if (it.key() == reserved)
        throw bad_param("chat_template_kwargs." + it.key(),
                        "chat_template_kwargs." + it.key() + " is set by the request itself, not here");
  return ordered_json(*k);
}

}  // namespace exspec::http
