#include "http/generation.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "http/api_error.h"
#include "http/logprobs_json.h"
#include "http/metrics.h"
#include "jobs/random_id.h"

namespace exspec::http {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

double seconds(Generation::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

class Generation::Sink : public TokenSink {
 public:
  Sink(std::weak_ptr<Generation> g, size_t index, std::function<void(std::function<void()>)> post, bool origins)
      : gen_(std::move(g)), index_(index), post_(std::move(post)), origins_(origins) {}
  void on_tokens(SeqId, const std::vector<int64_t>& delta) override { relay(&Generation::on_tokens, delta); }
  void on_logprobs(SeqId, const std::vector<TokenLogprob>& delta) override { relay(&Generation::on_logprobs, delta); }
  void on_origins(SeqId, const TokenOrigins& delta) override {
    if (origins_) relay(&Generation::on_origins, delta);  // asked for: nothing to post otherwise
  }
  void on_prompt_logprobs(SeqId, const std::vector<TokenLogprob>& e) override {
    relay(&Generation::on_prompt_logprobs, e);
  }
  void on_finish(SeqId, const SeqResult& r) override { relay(&Generation::on_finish, r); }

 private:
  // Posts the call to the connection's strand, where the Generation lives (if it still does).
  template <class Arg>
  void relay(void (Generation::*call)(size_t, const Arg&), const Arg& arg) {
    post_([g = gen_, i = index_, call, arg] {
      if (auto p = g.lock()) (p.get()->*call)(i, arg);
    });
  }

  std::weak_ptr<Generation> gen_;
  size_t index_;
  std::function<void(std::function<void()>)> post_;
  bool origins_;
};

Generation::Generation(GenRequest req, GenerationEnv env, std::weak_ptr<GenerationOutput> out,
                       Clock::time_point received)
    : req_(std::move(req)), env_(std::move(env)), out_(std::move(out)), received_(received) {
  id_ = jobs::random_id(req_.chat ? "chatcmpl-" : "cmpl-");
  // A chat request's created time is the instant its template's strftime_now formatted.
  created_ = req_.created ? req_.created : unix_now();
  stop_ids_ = env_.model_eos;
  stop_ids_.insert(stop_ids_.end(), req_.extra_eos.begin(), req_.extra_eos.end());
  stop_ids_.insert(stop_ids_.end(), req_.stop_token_ids.begin(), req_.stop_token_ids.end());
  // With tools the answer keeps its special tokens (a family's call marker may be one, as
  // Mistral's [TOOL_CALLS]); the token that ends the turn stays out of the text.
  const bool tools = req_.tool_format != chat::ToolFormat::None;
  const size_t n = static_cast<size_t>(req_.sampling.n);
  choices_.resize(req_.prompts.size() * n);
  for (size_t i = 0; i < choices_.size(); ++i) {
    Choice& c = choices_[i];
    c.prompt = req_.prompts[i / n];
    c.index = i % n;
    if (env_.tokenizer) c.decoder.emplace(*env_.tokenizer, req_.skip_special_tokens && !tools);
    c.stop = StopScanner(req_.stop, req_.include_stop_str_in_output);
    if (tools && req_.stream) c.tool_stream.emplace(req_.tool_format, req_.parallel_tool_calls);
  }
  req_.prompts.clear();
}

Generation::~Generation() { abort(); }

void Generation::abort() {
  if (aborted_) return;
  aborted_ = true;
  if (compiling_) compiling_->store(true);
  if (finished_ || !env_.engine || (env_.engine_stopping && env_.engine_stopping->load())) return;
  for (auto& c : choices_)
    if (c.id && !c.done) env_.engine->cancel(c.id);
}

void Generation::compile_then_start(grammar::GrammarService* grammars) {
  std::weak_ptr<Generation> weak = weak_from_this();
  auto post = env_.post;
  compiling_ = compile_grammar_async(grammars, req_.pending_grammar, [weak, post](CompileOutcome o) {
    post([weak, o = std::move(o)]() mutable {
      if (auto self = weak.lock()) self->on_compiled(std::move(o));
    });
  });
}

void Generation::on_compiled(CompileOutcome o) {
  compiling_.reset();
  req_.pending_grammar.reset();
  if (aborted_) return;
  auto out = out_.lock();
  if (!out) return;
  try {
    if (o.error) throw *o.error;
    req_.grammar = std::move(o.grammar);
    start();
  } catch (const ApiError& e) {
    finished_ = true;
    out->send_final(e.status(), e.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "");
  }
}

void Generation::start() {
  std::vector<int64_t> eos = env_.model_eos;  // the model's, and the chat template's end of turn
  eos.insert(eos.end(), req_.extra_eos.begin(), req_.extra_eos.end());
  submitted_ = Clock::now();
  open_ = choices_.size();
  for (size_t i = 0; i < choices_.size(); ++i) {
    auto sink = std::make_shared<Sink>(weak_from_this(), i, env_.post, req_.include_origin);
    SeqRequest q{choices_[i].prompt.ids, req_.max_tokens, {}};
    q.sampling = req_.sampling.params;
    q.sampling.choice = choices_[i].index;
    set_stop_rules(q, eos, req_.ignore_eos, req_.stop_token_ids, req_.min_tokens);
    q.prediction = req_.prediction;
    q.grammar = req_.grammar;
    // echo with logprobs (evaluation harnesses' log-likelihood): the prefill scores the prompt.
    if (scores_prompt()) q.prompt_logprobs = req_.sampling.params.logprobs;
    SubmitResult r = env_.engine->submit(std::move(q), env_.priority, sink);
    if (r.status != SubmitStatus::Ok) {
      abort();
      switch (r.status) {
        case SubmitStatus::Overloaded: throw ApiError(429, "the server is overloaded: " + r.message, "", "overloaded");
        case SubmitStatus::ShuttingDown: throw ApiError(503, r.message, "", "shutting_down");
        default: throw ApiError(400, r.message, req_.chat ? "messages" : "prompt", "invalid_value");
      }
    }
    choices_[i].id = r.id;
  }
  if (!req_.stream) return;
  // The stream starts with the echoed prompts (completions; with their logprobs, when the engine
  // sends them: on_prompt_logprobs) or the assistant role (chat).
  if (auto out = out_.lock()) {
    for (size_t i = 0; i < choices_.size(); ++i) {
      if (req_.chat) out->send_event(chunk(i, "", nullptr, true));
      else if (req_.echo && !scores_prompt() && !choices_[i].prompt.text.empty())
        out->send_event(chunk(i, choices_[i].prompt.text, nullptr, false));
    }
  }
}

void Generation::take_tokens(size_t i, const std::vector<int64_t>& ids, size_t from) {
  Choice& c = choices_[i];
  std::string text;
  for (size_t k = from; k < ids.size() && !c.stop.stopped(); ++k) {
    c.tokens.push_back(ids[k]);
    // Stop strings count from min_tokens on (vLLM): the text before is not scanned.
    const bool hidden = !c.decoder || (req_.tool_format != chat::ToolFormat::None && is_stop_id(ids[k]));
    const std::string piece = hidden ? std::string() : c.decoder->push(ids[k]);
    if (req_.include_origin) c.origins.counted(c.received + k - from, ids[k], piece);
    if (!c.decoder) continue;
    text += static_cast<int64_t>(c.tokens.size()) <= req_.min_tokens ? piece : c.stop.feed(piece);
  }
  c.received += ids.size() - std::min(from, ids.size());
  if (c.stop.stopped() && c.finish == FinishReason::None && !c.done) {
    c.finish = FinishReason::Stop;
    env_.engine->cancel(c.id, FinishReason::Stop);  // the sequence ends at the next step boundary
  }
  if (!text.empty()) emit_text(i, text, nullptr);
}

void Generation::on_tokens(size_t i, const std::vector<int64_t>& delta) {
  if (aborted_ || finished_ || choices_[i].done) return;
  if (!got_first_) {
    got_first_ = true;
    first_token_ = Clock::now();
  }
  take_tokens(i, delta, 0);
}

void Generation::on_logprobs(size_t i, const std::vector<TokenLogprob>& delta) {
  if (aborted_ || finished_ || choices_[i].done) return;
  auto& lp = choices_[i].logprobs;
  lp.insert(lp.end(), delta.begin(), delta.end());
}

void Generation::on_origins(size_t i, const TokenOrigins& delta) {
  if (aborted_ || finished_ || choices_[i].done || !req_.include_origin) return;
  choices_[i].origins.received(delta);
}

nlohmann::ordered_json Generation::take_logprobs(size_t i) {
  Choice& c = choices_[i];
  if (req_.sampling.params.logprobs < 0) return nullptr;
  const size_t to = std::min(c.tokens.size(), c.logprobs.size());
  auto j = logprobs_json(c.logprobs, c.logprobs_sent, to, req_.chat, env_.tokenizer, c.text_offset);
  c.logprobs_sent = std::max(c.logprobs_sent, to);
  return j;
}

void Generation::on_prompt_logprobs(size_t i, const std::vector<TokenLogprob>& scored) {
  Choice& c = choices_[i];
  if (aborted_ || finished_ || c.done || c.prompt.ids.empty()) return;
  std::vector<TokenLogprob> entries{TokenLogprob{c.prompt.ids[0], 0, {}}};  // a place for the first token
  entries.insert(entries.end(), scored.begin(), scored.end());
  c.prompt_logprobs = logprobs_json(entries, 0, entries.size(), false, env_.tokenizer, c.text_offset);
  c.prompt_logprobs["token_logprobs"][0] = nullptr;  // nothing precedes it (OpenAI, vLLM)
  c.prompt_logprobs["top_logprobs"][0] = nullptr;
  if (!req_.stream || c.prompt.text.empty()) return;
  if (auto out = out_.lock()) out->send_event(chunk(i, c.prompt.text, nullptr, false, c.prompt_logprobs));
}

nlohmann::ordered_json Generation::with_prompt_logprobs(size_t i, nlohmann::ordered_json generated) const {
  ordered_json j = choices_[i].prompt_logprobs;
  if (j.is_null()) return generated;
  if (generated.is_null()) return j;
  for (const char* key : {"tokens", "token_logprobs", "top_logprobs", "text_offset"})
    for (auto& v : generated[key]) j[key].push_back(std::move(v));
  return j;
}

void Generation::on_finish(size_t i, const SeqResult& r) {
  Choice& c = choices_[i];
  if (aborted_ || finished_ || c.done) return;
  if (r.logprobs.size() > c.logprobs.size())  // entries the deltas did not carry
    c.logprobs.insert(c.logprobs.end(), r.logprobs.begin() + c.logprobs.size(), r.logprobs.end());
  // Tokens the deltas did not carry (none, normally) still count.
  if (!c.stop.stopped() && r.tokens.size() > c.received) take_tokens(i, r.tokens, c.received);
  std::string tail;
  if (!c.stop.stopped() && c.decoder) {
    const std::string rest = c.decoder->flush();
    if (req_.include_origin) c.origins.flushed(rest);
    tail = c.stop.feed(rest);
  }
  tail += c.stop.finish();
  if (c.stop.stopped()) c.finish = FinishReason::Stop;
  if (c.finish == FinishReason::None) c.finish = r.finish;
  c.drafted = r.drafted, c.accepted = r.accepted;
  if (!r.error.empty()) c.error = r.error;
  else if (c.finish == FinishReason::None) c.error = "the sequence was cancelled (the server is shutting down)";
  c.done = true;
  --open_;
  if (req_.stream) {
    if (c.error.empty()) emit_text(i, tail, to_string(c.finish));
  } else if (!tail.empty()) {
    emit_text(i, tail, nullptr);
  }
  if (open_ == 0) complete();
}

nlohmann::ordered_json Generation::stop_reason(size_t i) const {
  const std::string& s = choices_[i].stop.matched();
  return s.empty() ? ordered_json(nullptr) : ordered_json(s);
}

bool Generation::is_stop_id(int64_t id) const {
  return std::find(stop_ids_.begin(), stop_ids_.end(), id) != stop_ids_.end();
}

void Generation::emit_text(size_t i, const std::string& text, const char* finish) {
  Choice& c = choices_[i];
  c.text += text;
  if (!req_.stream) return;
  if (c.tool_stream) {
    const std::string now = c.tool_stream->feed(text);
    if (!now.empty())
      if (auto out = out_.lock()) out->send_event(chunk(i, now, nullptr, false, take_logprobs(i)));
    if (finish) finish_tool_stream(i, finish);
    return;
  }
  if (auto out = out_.lock()) out->send_event(chunk(i, text, finish, false, take_logprobs(i)));
}

void Generation::finish_tool_stream(size_t i, const char* finish) {
  auto out = out_.lock();
  if (!out) return;
  const chat::ToolAnswer a = choices_[i].tool_stream->finish(std::string(finish) != to_string(FinishReason::Length));
  if (!a.content.empty()) out->send_event(chunk(i, a.content, nullptr, false, take_logprobs(i)));
  std::vector<std::string> ids;
  for (size_t k = 0; k < a.calls.size(); ++k) ids.push_back(jobs::random_id("call_"));
  for (auto& d : chat::tool_call_deltas(a.calls, ids)) out->send_event(chunk(i, "", nullptr, false, nullptr, std::move(d)));
  out->send_event(chunk(i, "", a.calls.empty() ? finish : "tool_calls", false, take_logprobs(i)));
}

ordered_json Generation::message(size_t i, std::string& finish) const {
  const Choice& c = choices_[i];
  if (req_.tool_format == chat::ToolFormat::None) return ordered_json{{"role", "assistant"}, {"content", c.text}};
  const chat::ToolAnswer a = chat::split_answer(req_.tool_format, c.text, req_.parallel_tool_calls, c.finish != FinishReason::Length);
  if (a.calls.empty()) return ordered_json{{"role", "assistant"}, {"content", c.text}};
  std::vector<std::string> ids;
  for (size_t k = 0; k < a.calls.size(); ++k) ids.push_back(jobs::random_id("call_"));
  finish = "tool_calls";
  return ordered_json{{"role", "assistant"},
                      {"content", a.content.empty() ? ordered_json(nullptr) : ordered_json(a.content)},
                      {"tool_calls", chat::tool_calls_json(a.calls, ids)}};
}

std::string Generation::chunk(size_t i, const std::string& text, const char* finish, bool first_chat,
                              nlohmann::ordered_json logprobs, nlohmann::ordered_json tool_call) {
  ordered_json ch;
  ch["index"] = i;
  if (req_.chat) {
    ordered_json delta = ordered_json::object();
    if (first_chat) delta["role"] = "assistant";
    if (first_chat || !text.empty()) delta["content"] = text;
    if (!tool_call.is_null()) delta["tool_calls"] = ordered_json::array({std::move(tool_call)});
    ch["delta"] = delta;
  } else {
    ch["text"] = text;
  }
  ch["logprobs"] = std::move(logprobs);
  ch["finish_reason"] = finish ? json(finish) : json(nullptr);
  if (finish && req_.report_stop) ch["stop_reason"] = stop_reason(i);
  if (finish && req_.return_token_ids) ch["token_ids"] = choices_[i].tokens;
  if (req_.include_origin) {  // our extension, asked for: nothing of it otherwise
    ch["origin"] = choices_[i].origins.take(finish != nullptr);
    if (finish) ch["speculation"] = choices_[i].origins.summary(choices_[i].drafted, choices_[i].accepted);
  }
  ordered_json j{{"id", id_},
                 {"object", req_.chat ? "chat.completion.chunk" : "text_completion"},
                 {"created", created_},
                 {"model", env_.model_name},
                 {"choices", ordered_json::array({ch})}};
  j["seed"] = req_.sampling.seed;  // extension: reproduces a sampled result
  if (req_.include_usage) j["usage"] = nullptr;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Generation::usage_json() const {
  int64_t p = 0, c = 0, drafted = 0, accepted = 0;
  for (const auto& ch : choices_) {
    if (ch.index == 0) p += static_cast<int64_t>(ch.prompt.ids.size());  // a prompt counts once, whatever n
    c += static_cast<int64_t>(ch.tokens.size());
    drafted += ch.drafted, accepted += ch.accepted;
  }
  // OpenAI's Predicted Outputs fields, filled from this request's drafts: the draft tokens the
  // target verified and accepted, and those it rejected.
  const ordered_json details{{"accepted_prediction_tokens", accepted}, {"rejected_prediction_tokens", drafted - accepted}};
  return ordered_json{{"prompt_tokens", p}, {"completion_tokens", c}, {"total_tokens", p + c},
                      {"completion_tokens_details", details}}.dump();
}

void Generation::complete() {
  finished_ = true;
  ended_ = Clock::now();
  const double engine_s = seconds(ended_ - submitted_);
  const double total_s = seconds(ended_ - received_);
  int64_t ptok = 0, ctok = 0;
  std::string error;
  for (const auto& c : choices_) {
    if (c.index == 0) ptok += static_cast<int64_t>(c.prompt.ids.size());
    ctok += static_cast<int64_t>(c.tokens.size());
    if (!c.error.empty() && error.empty()) error = c.error;
  }
  if (env_.metrics)
    env_.metrics->generation_done(ptok, ctok, got_first_ ? seconds(first_token_ - received_) : 0, engine_s,
                                  std::max(0.0, total_s - engine_s));
  auto out = out_.lock();
  if (!out) return;
  if (req_.stream) {
    if (!error.empty()) {
      out->send_event(ApiError(500, error, "", "engine_error").to_json().dump());
    } else if (req_.include_usage) {
      ordered_json j{{"id", id_},
                     {"object", req_.chat ? "chat.completion.chunk" : "text_completion"},
                     {"created", created_},
                     {"model", env_.model_name},
                     {"choices", ordered_json::array()},
                     {"usage", ordered_json::parse(usage_json())}};
      out->send_event(j.dump());
    }
    out->end_stream();
    return;
  }
  char timing[128];
  std::snprintf(timing, sizeof timing, "engine;dur=%.3f, server;dur=%.3f", engine_s * 1e3,
                std::max(0.0, total_s - engine_s) * 1e3);
  if (!error.empty()) {
    const bool shutting = error.find("shutting down") != std::string::npos;
    ApiError e(shutting ? 503 : 500, error, "", shutting ? "shutting_down" : "engine_error");
    out->send_final(e.status(), e.to_json().dump(), timing);
    return;
  }
  ordered_json choices = ordered_json::array();
  for (size_t i = 0; i < choices_.size(); ++i) {
    const Choice& c = choices_[i];
    ordered_json ch{{"index", i}};
    std::string finish = to_string(c.finish);
    if (req_.chat) {
      ch["message"] = message(i, finish);
    } else {
      ch["text"] = req_.echo ? c.prompt.text + c.text : c.text;
    }
    ch["logprobs"] = req_.chat ? take_logprobs(i) : with_prompt_logprobs(i, take_logprobs(i));
    ch["finish_reason"] = finish;
    if (req_.report_stop) ch["stop_reason"] = stop_reason(i);
    if (req_.return_token_ids) {
      ch["prompt_token_ids"] = c.prompt.ids;
      ch["token_ids"] = c.tokens;
    }
    choices.push_back(std::move(ch));
  }
  ordered_json j{{"id", id_},
                 {"object", req_.chat ? "chat.completion" : "text_completion"},
                 {"created", created_},
                 {"model", env_.model_name},
                 {"choices", std::move(choices)},
                 {"usage", ordered_json::parse(usage_json())},
                 {"seed", req_.sampling.seed}};  // extension: reproduces a sampled result
  out->send_final(200, j.dump(-1, ' ', false, json::error_handler_t::replace), timing);
}

}  // namespace exspec::http
