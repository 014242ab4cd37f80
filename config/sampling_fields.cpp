#include "config/sampling_fields.h"

#include <algorithm>
#include <random>
#include <string>

namespace exspec {
namespace {

using nlohmann::ordered_json;

SamplingFieldError bad_param(const std::string& param, const std::string& message, const std::string& code = "invalid_value") {
  return SamplingFieldError(param, message, code);
}

// body[name], or null when it is absent or JSON null (OpenAI treats both as "not given").
const ordered_json* field(const ordered_json& body, const char* name) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::string num(double d) {
  std::string s = std::to_string(d);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// A number in [lo, hi], or dflt when absent.
double number(const ordered_json& body, const char* name, double lo, double hi, double dflt) {
  const ordered_json* v = field(body, name);
  if (!v) return dflt;
  if (!v->is_number()) throw bad_param(name, std::string("'") + name + "' must be a number", "invalid_type");
  const double d = v->get<double>();
  if (!(d >= lo && d <= hi))
    throw bad_param(name, std::string("'") + name + "' must be between " + num(lo) + " and " + num(hi) + ", got " +
                              v->dump());
  return d;
}

int64_t integer(const ordered_json& body, const char* name, int64_t lo, int64_t hi, int64_t dflt) {
  const ordered_json* v = field(body, name);
  if (!v) return dflt;
  if (!v->is_number_integer()) throw bad_param(name, std::string("'") + name + "' must be an integer", "invalid_type");
  const int64_t i = v->get<int64_t>();
  if (i < lo || i > hi)
    throw bad_param(name, std::string("'") + name + "' must be between " + std::to_string(lo) + " and " +
                              std::to_string(hi) + ", got " + v->dump());
  return i;
}

// OpenAI: {"token id as a string": bias in [-100, 100]}.
void parse_logit_bias(const ordered_json& body, int64_t vocab, SamplingParams& p) {
  const ordered_json* lb = field(body, "logit_bias");
  if (!lb) return;
  if (!lb->is_object()) throw bad_param("logit_bias", "'logit_bias' must be an object of token id -> bias", "invalid_type");
  if (lb->size() > 1024) throw bad_param("logit_bias", "at most 1024 logit_bias entries are allowed");
  for (auto it = lb->begin(); it != lb->end(); ++it) {
    size_t used = 0;
    int64_t id = -1;
    try {
      id = std::stoll(it.key(), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != it.key().size())
      throw bad_param("logit_bias", "logit_bias keys must be token ids, got \"" + it.key() + "\"", "invalid_type");
    if (id < 0 || id >= vocab)
      throw bad_param("logit_bias", "logit_bias token id " + it.key() + " is outside the vocabulary [0, " +
                                        std::to_string(vocab) + ")");
    if (!it->is_number()) throw bad_param("logit_bias", "logit_bias values must be numbers", "invalid_type");
    const double b = it->get<double>();
    if (!(b >= -100 && b <= 100))
      throw bad_param("logit_bias", "logit_bias values must be between -100 and 100, got " + it->dump());
    p.logit_bias.emplace_back(id, b);
  }
}

void parse_logprobs(const ordered_json& body, bool chat, SamplingParams& p) {
  if (chat) {
    const ordered_json* lp = field(body, "logprobs");
    if (lp && !lp->is_boolean()) throw bad_param("logprobs", "'logprobs' must be a boolean", "invalid_type");
    const bool on = lp && lp->get<bool>();
    const int64_t top = integer(body, "top_logprobs", 0, 20, 0);
    if (field(body, "top_logprobs") && !on)
      throw bad_param("top_logprobs", "top_logprobs needs logprobs: true");
    p.logprobs = on ? top : -1;
  } else {
    p.logprobs = integer(body, "logprobs", 0, 5, -1);
  }
}

}  // namespace

SamplingRequest parse_sampling_fields(const ordered_json& body, bool chat, int64_t vocab, const GenerationDefaults& d) {
  SamplingRequest r;
  SamplingParams& p = r.params;
  r.n = integer(body, "n", 1, 16, 1);
  // The API's defaults (greedy, no filters, no penalties) unless the checkpoint recommends others.
  p.temperature = number(body, "temperature", 0, 2, d.temperature.value_or(0));
  p.top_p = number(body, "top_p", 0, 1, d.top_p.value_or(1));
  p.top_k = integer(body, "top_k", -1, vocab, std::min<int64_t>(d.top_k.value_or(0), vocab));
  if (p.top_k < 0) p.top_k = 0;  // vLLM's -1: no top-k
  p.min_p = number(body, "min_p", 0, 1, d.min_p.value_or(0));
  p.presence_penalty = number(body, "presence_penalty", -2, 2, d.presence_penalty.value_or(0));
  p.frequency_penalty = number(body, "frequency_penalty", -2, 2, d.frequency_penalty.value_or(0));
  p.repetition_penalty = number(body, "repetition_penalty", 0, 2, d.repetition_penalty.value_or(1));
  if (p.repetition_penalty == 0) throw bad_param("repetition_penalty", "'repetition_penalty' must be > 0");
  parse_logit_bias(body, vocab, p);
  parse_logprobs(body, chat, p);
  if (const ordered_json* s = field(body, "seed")) {
    if (!s->is_number_integer()) throw bad_param("seed", "'seed' must be an integer", "invalid_type");
    p.seed = s->is_number_unsigned() ? s->get<uint64_t>() : static_cast<uint64_t>(s->get<int64_t>());
    r.seed_given = true;
    r.seed = *s;
  } else {
    // A fresh seed, below 2^53 so that every JSON client reads it back exactly.
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    p.seed = rng() >> 11;
    r.seed = p.seed;
  }
  if (const ordered_json* bo = field(body, "best_of"); bo && !(bo->is_number_integer() && bo->get<int64_t>() == r.n))
    throw bad_param("best_of", "best_of is not supported: leave it out (or equal to n)", "unsupported_value");
  return r;
}

}  // namespace exspec
