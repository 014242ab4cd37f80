#include "http/tokenize_api.h"

#include <set>

#include "http/api_error.h"
#include "http/chat_request.h"
#include "http/json_body.h"
#include "http/openai_request.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec::http {
namespace {

using nlohmann::ordered_json;

void only(const ordered_json& body, const std::set<std::string>& known) {
  for (auto it = body.begin(); it != body.end(); ++it)
    if (!known.count(it.key()))
      throw bad_param(it.key(), "Unrecognized request argument supplied: " + it.key(), "unknown_parameter");
}

bool flag(const ordered_json& body, const char* name, bool dflt) {
  const ordered_json* v = field(body, name);
  if (!v) return dflt;
  if (!v->is_boolean()) throw bad_param(name, std::string("'") + name + "' must be a boolean", "invalid_type");
  return v->get<bool>();
}

const Tokenizer& need_tokenizer(const ModelFacts& m) {
  if (!m.tokenizer) throw bad_param("model", "this model has no tokenizer.json", "unsupported_value");
  return *m.tokenizer;
}

// {"count", "max_model_len", "tokens", "token_strs"}: vLLM's answer.
ordered_json tokenize(const ordered_json& body, const ModelFacts& m) {
  std::vector<int64_t> ids;
  if (field(body, "messages")) {
    only(body, {"model", "messages", "add_generation_prompt", "add_special_tokens", "return_token_strs", "tools",
                "chat_template_kwargs"});
    chat::ChatInput in;
    in.messages = parse_chat_messages(body, m.limits);
    in.tools = parse_chat_tools(body).tools;
    in.kwargs = parse_template_kwargs(body);
    in.add_generation_prompt = flag(body, "add_generation_prompt", true);
    in.now = static_cast<std::time_t>(unix_now());
    PromptIn p = chat_prompt(in, m);
    // vLLM's default: the rendered template holds BOS itself; add_special_tokens adds it again.
    ids = flag(body, "add_special_tokens", false) ? need_tokenizer(m).encode(p.text, true, true) : std::move(p.ids);
  } else {
    only(body, {"model", "prompt", "add_special_tokens", "return_token_strs", "split_special_tokens"});
    const ordered_json* p = field(body, "prompt");
    if (!p) throw bad_param("prompt", "'prompt' or 'messages' is required", "missing_required_parameter");
    if (!p->is_string()) throw bad_param("prompt", "'prompt' must be a string", "invalid_type");
    ids = need_tokenizer(m).encode(p->get<std::string>(), flag(body, "add_special_tokens", true),
                                   /*allow_special=*/!split_special_tokens(body, m));
  }
  ordered_json strs = nullptr;
  if (flag(body, "return_token_strs", false)) {
    strs = ordered_json::array();
    for (int64_t id : ids) strs.push_back(need_tokenizer(m).decode({id}));
  }
  return ordered_json{{"count", ids.size()}, {"max_model_len", m.context}, {"tokens", ids}, {"token_strs", strs}};
}

ordered_json detokenize(const ordered_json& body, const ModelFacts& m) {
  only(body, {"model", "tokens"});
  const ordered_json* t = field(body, "tokens");
  if (!t) throw bad_param("tokens", "'tokens' is required", "missing_required_parameter");
  if (!t->is_array()) throw bad_param("tokens", "'tokens' must be an array of token ids", "invalid_type");
  std::vector<int64_t> ids;
  for (const auto& v : *t) {
    if (!v.is_number_integer()) throw bad_param("tokens", "'tokens' must be an array of token ids", "invalid_type");
    const int64_t id = v.get<int64_t>();
    if (id < 0 || id >= m.vocab)
      throw bad_param("tokens", "token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                    std::to_string(m.vocab) + ")");
    ids.push_back(id);
  }
  return ordered_json{{"prompt", need_tokenizer(m).decode(ids)}};
}

// The body checked as both endpoints take it, then answered by `f`.
Response answer(const Call& c, ordered_json (*f)(const ordered_json&, const ModelFacts&)) {
  const Backend& b = need_ready(c.ctx);
  const ordered_json body = parse_json_body(c.req.body());
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object", "", "invalid_body");
  check_model(body, b.facts);
  return c.json(200, f(body, b.facts).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

Response tokenize_request(const Call& c) { return answer(c, tokenize); }
Response detokenize_request(const Call& c) { return answer(c, detokenize); }

}  // namespace exspec::http
