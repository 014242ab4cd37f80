#include "http/openai_request.h"

#include <chrono>
#include <set>

#include "http/api_error.h"
#include "http/chat_request.h"
#include "http/json_body.h"
#include "http/prediction_request.h"
#include "http/structured_request.h"
#include "http/tool_grammar.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec::http {
namespace {

using nlohmann::ordered_json;

bool get_bool(const ordered_json& body, const char* name, bool dflt) {
  const ordered_json* v = field(body, name);
  if (!v) return dflt;
  if (!v->is_boolean()) throw bad_param(name, std::string("'") + name + "' must be a boolean", "invalid_type");
  return v->get<bool>();
}

std::optional<int64_t> get_int(const ordered_json& body, const char* name) {
  const ordered_json* v = field(body, name);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) throw bad_param(name, std::string("'") + name + "' must be an integer", "invalid_type");
  return v->get<int64_t>();
}

// Unknown fields are a 400; the output-constraint fields are known to both endpoints.
void reject_unknown(const ordered_json& body, std::set<std::string> known) {
  for (const char* const* f = kOutputConstraintFields; *f; ++f) known.insert(*f);
  for (auto it = body.begin(); it != body.end(); ++it)
    if (!known.count(it.key()))
      throw bad_param(it.key(), "Unrecognized request argument supplied: " + it.key(), "unknown_parameter");
}

// vLLM's stop and detokenizing extensions (both endpoints, batch lines too).
void parse_stop_extensions(const ordered_json& body, const ModelFacts& m, GenRequest& g) {
  g.ignore_eos = get_bool(body, "ignore_eos", false);
  g.include_stop_str_in_output = get_bool(body, "include_stop_str_in_output", false);
  g.skip_special_tokens = get_bool(body, "skip_special_tokens", true);
  if (const ordered_json* ids = field(body, "stop_token_ids")) {
    if (!ids->is_array()) throw bad_param("stop_token_ids", "'stop_token_ids' must be an array of token ids", "invalid_type");
    for (const auto& v : *ids) {
      if (!v.is_number_integer())
        throw bad_param("stop_token_ids", "'stop_token_ids' must be an array of token ids", "invalid_type");
      const int64_t id = v.get<int64_t>();
      if (id < 0 || id >= m.vocab)
        throw bad_param("stop_token_ids", "stop token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                              std::to_string(m.vocab) + ")");
      g.stop_token_ids.push_back(id);
    }
    if (g.stop_token_ids.size() > 64) throw bad_param("stop_token_ids", "at most 64 stop token ids are allowed");
  }
  if (std::optional<int64_t> mt = get_int(body, "min_tokens")) {
    if (*mt < 0) throw bad_param("min_tokens", "'min_tokens' must be >= 0");
    g.min_tokens = *mt;
  }
}

// The fields both endpoints share.
void check_common(const ordered_json& body, const ModelFacts& m, GenRequest& g) {
  check_model(body, m);
  parse_stop_extensions(body, m, g);
  g.sampling = parse_sampling(body, g.chat, m.vocab, m.defaults);
  g.prediction = parse_prediction(body, m);
  if (const ordered_json* u = field(body, "user"); u && !u->is_string())
    throw bad_param("user", "'user' must be a string", "invalid_type");

  g.stream = get_bool(body, "stream", false);
  if (const ordered_json* so = field(body, "stream_options")) {
    if (!g.stream) throw bad_param("stream_options", "stream_options is only allowed when stream is true");
    if (!so->is_object()) throw bad_param("stream_options", "'stream_options' must be an object", "invalid_type");
    for (auto it = so->begin(); it != so->end(); ++it)
      if (it.key() != "include_usage" && it.key() != "continuous_usage_stats" && it.key() != "include_origin")
        throw bad_param("stream_options", "Unrecognized stream_options field: " + it.key(), "unknown_parameter");
    g.include_usage = get_bool(*so, "include_usage", false);
    g.include_origin = get_bool(*so, "include_origin", false);  // our extension (docs/serving.md)
  }
  g.return_token_ids = get_bool(body, "return_token_ids", false);

  if (const ordered_json* st = field(body, "stop")) {
    if (st->is_string()) {
      g.stop.push_back(st->get<std::string>());
    } else if (st->is_array()) {
      for (const auto& s : *st) {
        if (!s.is_string()) throw bad_param("stop", "'stop' must be a string or an array of strings", "invalid_type");
        g.stop.push_back(s.get<std::string>());
      }
    } else {
      throw bad_param("stop", "'stop' must be a string or an array of strings", "invalid_type");
    }
    if (g.stop.size() > m.limits.max_stop)
      throw bad_param("stop", "at most " + std::to_string(m.limits.max_stop) + " stop strings are allowed");
    for (const auto& s : g.stop)
      if (s.empty()) throw bad_param("stop", "stop strings must not be empty");
  }
}

// What a context error adds for a longrope model served on its short factors.
std::string longrope_note(const ModelFacts& m) {
  if (m.longrope_positions <= m.context) return "";
  return " (the context of this model's longrope short factors; a server started with --longrope long serves up to " +
         std::to_string(m.longrope_positions) + " tokens)";
}

// max_tokens against the limits and the context; `dflt` < 0 means "as much as the context allows".
void settle_max_tokens(const ordered_json& body, const ModelFacts& m, GenRequest& g, int64_t dflt, const char* name) {
  std::optional<int64_t> mt = get_int(body, name);
  if (!mt && std::string(name) == "max_completion_tokens") {
    mt = get_int(body, "max_tokens");
    if (mt) name = "max_tokens";
  }
  const int64_t max_prompt = m.limits.max_prompt_tokens > 0 ? m.limits.max_prompt_tokens : m.context;
  size_t longest = 0;
  for (size_t i = 0; i < g.prompts.size(); ++i) {
    const auto& p = g.prompts[i];
    if (p.ids.empty())
      throw bad_param(g.chat ? "messages" : "prompt", g.prompts.size() > 1 ? "prompt " + std::to_string(i) + " is empty"
                                                                            : "the prompt is empty");
    if (static_cast<int64_t>(p.ids.size()) > max_prompt)
      throw bad_param(g.chat ? "messages" : "prompt",
                      "the prompt has " + std::to_string(p.ids.size()) + " tokens; the limit is " +
                          std::to_string(max_prompt) + longrope_note(m), "context_length_exceeded");
    longest = std::max(longest, p.ids.size());
  }
  const int64_t room = m.context - static_cast<int64_t>(longest);
  if (mt) {
    if (*mt < 0) throw bad_param(name, std::string("'") + name + "' must be >= 0");
    if (*mt > m.limits.max_tokens)
      throw bad_param(name, std::string("'") + name + "' is " + std::to_string(*mt) + "; this server allows at most " +
                                std::to_string(m.limits.max_tokens));
    g.max_tokens = *mt;
  } else if (m.defaults.max_new_tokens) {
    // The checkpoint's max_new_tokens, within the server's limit and the room the prompt leaves
    // (vLLM: the smaller of it and the context left).
    g.max_tokens = std::min({*m.defaults.max_new_tokens, m.limits.max_tokens, std::max<int64_t>(room, 0)});
  } else {
    g.max_tokens = dflt >= 0 ? dflt : std::min<int64_t>(m.limits.max_tokens, std::max<int64_t>(room, 0));
  }
  if (g.max_tokens > room)
    throw bad_param(mt ? name : "messages",
                    "This model's maximum context length is " + std::to_string(m.context) + " tokens. However, you "
                    "requested " + std::to_string(longest + g.max_tokens) + " tokens (" + std::to_string(longest) +
                    " in the prompt, " + std::to_string(g.max_tokens) + " for the completion)." + longrope_note(m),
                    "context_length_exceeded");
  if (g.min_tokens > g.max_tokens)
    throw bad_param("min_tokens", "'min_tokens' (" + std::to_string(g.min_tokens) + ") must not exceed the " +
                                      "completion's length (" + std::to_string(g.max_tokens) + " tokens)");
}


// The output's grammar, compiled last (the costliest check). Under a grammar the text ends where
// the grammar does, so ignore_eos and min_tokens would leave no token allowed there.
void constrain(GenRequest& g, const std::optional<OutputConstraint>& c, const ModelFacts& m) {
  if (!c) return;
  if (g.ignore_eos)
    throw bad_param("ignore_eos", "ignore_eos cannot be combined with " + c->param +
                                      ": once the constrained text is complete, only an end token is allowed");
  if (g.min_tokens > 0)
    throw bad_param("min_tokens", "min_tokens cannot be combined with " + c->param +
                                      ": the constrained text may be complete before min_tokens tokens");
  if (!m.grammars)
    throw bad_param(c->param, "this model has no tokenizer.json: structured output needs its vocabulary", "unsupported_value");
  if (m.defer_grammar) g.pending_grammar = std::make_shared<OutputConstraint>(*c);
  else g.grammar = compile_grammar(m.grammars, *c);
}

// Special tokens written in the text become those tokens unless `split` (HF tokenizers, vLLM).
PromptIn from_text(const std::string& text, const ModelFacts& m, bool split) {
  if (!m.tokenizer)
    throw bad_param("prompt", "this model has no tokenizer.json: send prompts as token ids", "unsupported_value");
  PromptIn p;
  p.text = text;
  p.ids = m.tokenizer->encode(text, /*add_special_tokens=*/true, /*allow_special=*/!split);
  return p;
}

PromptIn from_ids(std::vector<int64_t> ids, const ModelFacts& m) {
  PromptIn p;
  p.from_ids = true;
  if (m.tokenizer) p.text = m.tokenizer->decode(ids);
  p.ids = std::move(ids);
  return p;
}

}  // namespace

void check_model(const ordered_json& body, const ModelFacts& m) {
  const ordered_json* model = field(body, "model");
  if (!model) return;  // the server serves one model (as vLLM and llama.cpp do)
  if (!model->is_string()) throw bad_param("model", "'model' must be a string", "invalid_type");
  bool known = false;
  for (const auto& n : m.model_names) known = known || n == model->get<std::string>();
  if (!known)
    throw ApiError(404, "The model '" + model->get<std::string>() + "' does not exist; this server serves '" +
                            m.model_names.front() + "'", "model", "model_not_found");
}

bool split_special_tokens(const ordered_json& body, const ModelFacts& m) {
  return get_bool(body, "split_special_tokens", m.split_special_tokens);
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

PromptIn chat_prompt(const chat::ChatInput& in, const ModelFacts& m) {
  if (!m.chat) throw ApiError(400, m.chat_error, "messages", "chat_template_unsupported");
  if (!m.tokenizer) throw bad_param("messages", "this model has no tokenizer.json: chat needs one", "unsupported_value");
  PromptIn p;
  try {
    p.text = m.chat->render(in);
  } catch (const chat::ChatTemplateError& e) {  // the messages broke the template: the client's to fix
    throw ApiError(400, e.what(), "messages", "chat_template_error");
  }
  // As transformers' apply_chat_template: the rendered text holds the BOS itself, and its special
  // tokens are parsed as such.
  p.ids = m.tokenizer->encode(p.text, /*add_special_tokens=*/false, /*allow_special=*/true);
  return p;
}

GenRequest parse_completion_request(const ordered_json& body, const ModelFacts& m) {
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object", "", "invalid_body");
  reject_unknown(body, {"model", "prompt", "max_tokens", "n", "best_of", "echo", "logprobs", "stop", "suffix",
                        "temperature", "top_p", "frequency_penalty", "presence_penalty", "logit_bias", "seed", "stream",
                        "stream_options", "user", "return_token_ids", "top_k", "min_p", "repetition_penalty",
                        "ignore_eos", "min_tokens", "stop_token_ids", "include_stop_str_in_output",
                        "skip_special_tokens", "prediction", "split_special_tokens"});
  GenRequest g;
  check_common(body, m, g);
  const std::optional<OutputConstraint> output = parse_output_constraint(body, m.limits);
  const bool split = split_special_tokens(body, m);
  if (const ordered_json* sfx = field(body, "suffix"); sfx && !(sfx->is_string() && sfx->get<std::string>().empty()))
    throw bad_param("suffix", "suffix is not supported", "unsupported_value");
  g.echo = get_bool(body, "echo", false);  // with logprobs: the prompt's logprobs too

  const ordered_json* p = field(body, "prompt");
  if (!p) throw bad_param("prompt", "'prompt' is required", "missing_required_parameter");
  const char* shape = "'prompt' must be a string, an array of strings, an array of token ids or an array of arrays "
                      "of token ids";
  if (p->is_string()) {
    g.prompts.push_back(from_text(p->get<std::string>(), m, split));
  } else if (p->is_array()) {
    if (p->empty()) throw bad_param("prompt", "'prompt' must not be an empty array");
    if ((*p)[0].is_number()) {
      g.prompts.push_back(from_ids(token_ids(*p, m, "prompt", "a token-id prompt"), m));
    } else {
      if (p->size() > m.limits.max_prompts)
        throw bad_param("prompt", "at most " + std::to_string(m.limits.max_prompts) + " prompts per request");
      for (const auto& e : *p) {
        if (e.is_string()) g.prompts.push_back(from_text(e.get<std::string>(), m, split));
        else if (e.is_array()) g.prompts.push_back(from_ids(token_ids(e, m, "prompt", "each token-id prompt"), m));
        else throw bad_param("prompt", shape, "invalid_type");
      }
    }
  } else {
    throw bad_param("prompt", shape, "invalid_type");
  }
  settle_max_tokens(body, m, g, m.limits.default_max_tokens, "max_tokens");
  constrain(g, output, m);
  return g;
}

GenRequest parse_chat_request(const ordered_json& body, const ModelFacts& m) {
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object", "", "invalid_body");
  reject_unknown(body, {"model", "messages", "max_tokens", "max_completion_tokens", "n", "stop", "temperature",
                        "top_p", "frequency_penalty", "presence_penalty", "logit_bias", "logprobs", "top_logprobs",
                        "seed", "stream", "stream_options", "user", "store", "metadata",
                        "return_token_ids", "tools", "tool_choice", "parallel_tool_calls", "top_k", "min_p",
                        "repetition_penalty", "ignore_eos", "min_tokens", "stop_token_ids",
                        "include_stop_str_in_output", "skip_special_tokens", "prediction", "chat_template_kwargs"});
  GenRequest g;
  g.chat = true;
  g.created = unix_now();
  check_common(body, m, g);
  std::optional<OutputConstraint> output = parse_output_constraint(body, m.limits);
  chat::ChatInput in;
  in.messages = parse_chat_messages(body, m.limits);
  const ChatTools tools = parse_chat_tools(body);
  in.tools = tools.tools;
  in.kwargs = parse_template_kwargs(body);
  in.now = static_cast<std::time_t>(g.created);
  if (!m.chat) throw ApiError(400, m.chat_error, "messages", "chat_template_unsupported");
  const ToolSyntax syntax{m.chat->tool_format, m.chat->mistral_args};
  if (tools.choice == ToolChoice::Auto && syntax.format == chat::ToolFormat::None)
    throw bad_param("tools", "this model's chat template writes tool calls in no syntax exspec parses; set "
                             "tool_call_parser (--tool-call-parser) to hermes, llama3_json, deepseek_v3 or mistral, "
                             "or send tool_choice \"none\"", "unsupported_value");
  if (tools.choice != ToolChoice::None) {
    g.tool_format = syntax.format;
    g.parallel_tool_calls = tools.parallel && tools.choice != ToolChoice::Named;
  }
  output = answer_constraint(tools, syntax, std::move(output), m.tokenizer, m.limits);
  g.prompts.push_back(chat_prompt(in, m));
  g.extra_eos = m.chat->end_ids;
  for (const auto& s : m.chat->end_stops)
    if (g.stop.size() < m.limits.max_stop + m.chat->end_stops.size()) g.stop.push_back(s);
  settle_max_tokens(body, m, g, -1, "max_completion_tokens");
  constrain(g, output, m);
  return g;
}

}  // namespace exspec::http
