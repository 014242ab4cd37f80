#include "http/tool_grammar.h"

#include "http/api_error.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec::http {
namespace {

using grammar::GrammarRequest;
using nlohmann::ordered_json;

GrammarRequest text(std::string s) { return GrammarRequest::literal(std::move(s)); }

// A family's marker: the special token of that text where the vocabulary has one, else the text.
GrammarRequest marker(const Tokenizer& tok, const std::string& m) {
  if (auto id = tok.token_to_id(m); id && tok.is_special(*id)) return GrammarRequest::special_token(static_cast<int32_t>(*id));
  return text(m);
}

struct Tool {
  std::string name;
  std::string param;  // tools[i].function.parameters
  GrammarRequest args;
};

// A function's arguments: an object its parameters schema accepts ("{}" without one). A schema
// that says nothing of the type is an object's (OpenAI's parameters always are).
GrammarRequest arguments(const ordered_json& fn, const std::string& param, const Limits& limits) {
  if (!fn.contains("parameters")) return text("{}");
  ordered_json schema = fn["parameters"];
  if (const auto t = schema.find("type"); t != schema.end()) {
    if (*t != "object")
      throw bad_param(param, param + " must describe an object (\"type\": \"object\"): a call's arguments are one");
  } else if (!schema.contains("$ref")) {
    schema["type"] = "object";
  }
  const std::string s = schema.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > limits.max_grammar_bytes)
    throw bad_param(param, param + " is " + std::to_string(s.size()) + " bytes; this server allows at most " +
                               std::to_string(limits.max_grammar_bytes) + " (limits.max_grammar_bytes)");
  return GrammarRequest::json_schema(s);
}

std::vector<Tool> tools_of(const ChatTools& t, const Limits& limits) {
  std::vector<Tool> out;
  for (size_t i = 0; i < t.tools.size(); ++i) {
    const ordered_json& fn = t.tools[i]["function"];
    const std::string name = fn["name"].get<std::string>();
    if (t.choice == ToolChoice::Named && name != t.named) continue;
    const std::string param = "tools[" + std::to_string(i) + "].function.parameters";
    out.push_back(Tool{name, param, arguments(fn, param, limits)});
  }
  return out;
}

// One call of the tool in the family's syntax.
GrammarRequest call(const Tool& t, const ToolSyntax& s, const Tokenizer& tok) {
  switch (s.format) {
    case chat::ToolFormat::Hermes:
      return GrammarRequest::sequence({marker(tok, "<tool_call>"), text("\n{\"name\": \"" + t.name + "\", \"arguments\": "),
                                       t.args, text("}\n"), marker(tok, "</tool_call>")});
    case chat::ToolFormat::Llama3Json:
      return GrammarRequest::sequence({text("{\"name\": \"" + t.name + "\", \"parameters\": "), t.args, text("}")});
    case chat::ToolFormat::DeepSeekV3:
      return GrammarRequest::sequence({marker(tok, "<｜tool▁call▁begin｜>"), text("function"), marker(tok, "<｜tool▁sep｜>"),
                                       text(t.name + "\n```json\n"), t.args, text("\n```"), marker(tok, "<｜tool▁call▁end｜>")});
    case chat::ToolFormat::Mistral:
      if (s.mistral_args) return GrammarRequest::sequence({marker(tok, "[TOOL_CALLS]"), text(t.name), marker(tok, "[ARGS]"), t.args});
      return GrammarRequest::sequence({text("{\"name\": \"" + t.name + "\", \"arguments\": "), t.args, text("}")});
    case chat::ToolFormat::None: break;
  }
  throw bad_param("tool_choice", "this model's chat template writes tool calls in no syntax exspec parses; set "
                                 "tool_call_parser (--tool-call-parser) to hermes, llama3_json, deepseek_v3 or mistral",
                  "unsupported_value");
}

}  // namespace

GrammarRequest tool_calls_grammar(const ChatTools& t, const ToolSyntax& s, const Tokenizer& tok, const Limits& limits) {
  std::vector<GrammarRequest> calls;
  for (const Tool& tool : tools_of(t, limits)) calls.push_back(call(tool, s, tok));
  const int max = t.choice == ToolChoice::Named || !t.parallel ? 1 : -1;
  GrammarRequest one = GrammarRequest::alternatives(std::move(calls));
  switch (s.format) {
    case chat::ToolFormat::Hermes: return GrammarRequest::repeat(std::move(one), text("\n"), 1, max);
    case chat::ToolFormat::Llama3Json: return GrammarRequest::repeat(std::move(one), text("; "), 1, max);
    case chat::ToolFormat::DeepSeekV3:
      return GrammarRequest::sequence({marker(tok, "<｜tool▁calls▁begin｜>"), GrammarRequest::repeat(std::move(one), text("\n"), 1, max),
                                       marker(tok, "<｜tool▁calls▁end｜>")});
    case chat::ToolFormat::Mistral:
      if (s.mistral_args) return GrammarRequest::repeat(std::move(one), text(""), 1, max);
      return GrammarRequest::sequence({marker(tok, "[TOOL_CALLS]"), text(" ["), GrammarRequest::repeat(std::move(one), text(", "), 1, max),
                                       text("]")});
    case chat::ToolFormat::None: break;
  }
  return one;
}

std::optional<OutputConstraint> answer_constraint(const ChatTools& t, const ToolSyntax& s, std::optional<OutputConstraint> output,
                                                  const Tokenizer* tok, const Limits& limits) {
  const bool forced = t.choice == ToolChoice::Required || t.choice == ToolChoice::Named;
  if (forced && output)
    throw bad_param("tool_choice", "tool_choice " + std::string(t.choice == ToolChoice::Required ? "\"required\"" : "naming a function") +
                                       " makes the answer tool calls; it cannot be combined with " + output->param +
                                       " (send tool_choice \"auto\" to allow either)");
  if (!forced && !(t.choice == ToolChoice::Auto && output)) return output;
  if (!tok) throw bad_param("tool_choice", "this model has no tokenizer.json", "unsupported_value");
  OutputConstraint c;
  for (const Tool& tool : tools_of(t, limits)) c.sources.emplace_back(tool.param, tool.args);
  GrammarRequest calls = tool_calls_grammar(t, s, *tok, limits);
  if (forced) {
    c.grammar = std::move(calls);
    c.param = "tools";
    return c;
  }
  // "auto" under a constraint: the constrained content, or calls.
  c.sources.insert(c.sources.begin(), {output->param, output->grammar});
  c.grammar = GrammarRequest::alternatives({output->grammar, std::move(calls)});
  c.param = output->param;
  return c;
}

}  // namespace exspec::http
