#include "http/structured_request.h"

#include <future>
#include <vector>

#include "grammar/automaton.h"
#include "http/chat_request.h"
#include "grammar/grammar_service.h"
#include "http/json_body.h"

namespace exspec::http {
namespace {

using grammar::GrammarRequest;
using nlohmann::ordered_json;

void check_size(size_t bytes, const std::string& param, const Limits& limits) {
  if (bytes > limits.max_grammar_bytes)
    throw bad_param(param, param + " is " + std::to_string(bytes) + " bytes; this server allows at most " +
                               std::to_string(limits.max_grammar_bytes) + " (limits.max_grammar_bytes)");
}

// A JSON schema object (or, where `text_ok`, a JSON text holding one, as vLLM's json and
// guided_json accept), as compact text in the client's property order.
GrammarRequest schema_of(const ordered_json& v, const std::string& param, const Limits& limits, bool text_ok) {
  ordered_json schema = v;
  if (v.is_string() && text_ok) {
    check_size(v.get_ref<const std::string&>().size(), param, limits);
    try {
      schema = parse_json_text(v.get<std::string>());
    } catch (const JsonBodyError& e) {
      throw bad_param(param, param + " is not valid JSON: " + e.what());
    }
  }
  if (!schema.is_object())
    throw bad_param(param, param + (text_ok ? " must be a JSON schema (an object, or its JSON text)" : " must be a JSON schema object"),
                    "invalid_type");
  std::string text = schema.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  check_size(text.size(), param, limits);
  return GrammarRequest::json_schema(std::move(text));
}

GrammarRequest text_kind(const ordered_json& v, const std::string& param, const Limits& limits, GrammarRequest::Kind kind,
                         const char* what) {
  if (!v.is_string()) throw bad_param(param, param + " must be " + what, "invalid_type");
  check_size(v.get_ref<const std::string&>().size(), param, limits);
  GrammarRequest r;
  r.kind = kind;
  r.text = v.get<std::string>();
  return r;
}

GrammarRequest choice_of(const ordered_json& v, const std::string& param, const Limits& limits) {
  if (!v.is_array() || v.empty()) throw bad_param(param, param + " must be a non-empty array of strings", "invalid_type");
  GrammarRequest r;
  r.kind = GrammarRequest::Kind::Choice;
  size_t bytes = 0;
  for (const auto& c : v) {
    if (!c.is_string()) throw bad_param(param, param + " must be a non-empty array of strings", "invalid_type");
    r.choices.push_back(c.get<std::string>());
    bytes += r.choices.back().size();
  }
  check_size(bytes, param, limits);
  return r;
}

void need_bool(const ordered_json& obj, const char* key, const std::string& at) {
  if (const ordered_json* b = field(obj, key); b && !b->is_boolean())
    throw bad_param(at + "." + key, at + "." + key + " must be a boolean", "invalid_type");
}

std::optional<OutputConstraint> response_format(const ordered_json& body, const Limits& limits) {
  const ordered_json* rf = field(body, "response_format");
  if (!rf) return std::nullopt;
  if (!rf->is_object()) throw bad_param("response_format", "'response_format' must be an object", "invalid_type");
  const std::string type = need_field(*rf, "type", "response_format", &ordered_json::is_string, "a string").get<std::string>();
  if (type == "text" || type == "json_object") {
    only_fields(*rf, "response_format", {"type"});
    if (type == "text") return std::nullopt;
    GrammarRequest r;
    r.kind = GrammarRequest::Kind::JsonObject;
    return OutputConstraint{std::move(r), "response_format"};
  }
  if (type != "json_schema")
    throw bad_param("response_format.type", "response_format.type must be \"text\", \"json_object\" or \"json_schema\"",
                    "unsupported_value");
  only_fields(*rf, "response_format", {"type", "json_schema"});
  const std::string at = "response_format.json_schema";
  const ordered_json& js = need_field(*rf, "json_schema", "response_format", &ordered_json::is_object, "an object");
  only_fields(js, at, {"name", "description", "schema", "strict"});
  const std::string name = need_field(js, "name", at, &ordered_json::is_string, "a string").get<std::string>();
  if (!valid_function_name(name)) throw bad_param(at + ".name", at + ".name must be 1 to 64 of a-z, A-Z, 0-9, _ and -");
  if (const ordered_json* d = field(js, "description"); d && !d->is_string())
    throw bad_param(at + ".description", at + ".description must be a string", "invalid_type");
  need_bool(js, "strict", at);  // strict or not, the output is held to the schema
  const ordered_json& schema = need_field(js, "schema", at, &ordered_json::is_object, "a JSON schema object");
  return OutputConstraint{schema_of(schema, at + ".schema", limits, false), at + ".schema"};
}

// vLLM's structured_outputs: exactly one of json, regex, choice, grammar, json_object (true).
std::optional<OutputConstraint> structured_outputs(const ordered_json& body, const Limits& limits) {
  const ordered_json* so = field(body, "structured_outputs");
  if (!so) return std::nullopt;
  const std::string at = "structured_outputs";
  if (!so->is_object()) throw bad_param(at, "'structured_outputs' must be an object", "invalid_type");
  for (const char* no : {"whitespace_pattern", "structural_tag"})
    if (field(*so, no))
      throw bad_param(at + "." + no, at + "." + no + " is not supported (the output's JSON is compact, without whitespace: "
                                                       "docs/structured-output.md)", "unsupported_value");
  only_fields(*so, at, {"json", "regex", "choice", "grammar", "json_object", "disable_fallback", "disable_any_whitespace",
                        "disable_additional_properties", "whitespace_pattern", "structural_tag"});
  // Accepted as what exspec does anyway: no fallback, no whitespace, no properties a schema
  // does not list (xgrammar's strict mode, vLLM's default backend).
  for (const char* b : {"json_object", "disable_fallback", "disable_any_whitespace", "disable_additional_properties"})
    need_bool(*so, b, at);
  std::vector<OutputConstraint> found;
  if (const ordered_json* j = field(*so, "json")) found.push_back({schema_of(*j, at + ".json", limits, true), at + ".json"});
  if (const ordered_json* r = field(*so, "regex"))
    found.push_back({text_kind(*r, at + ".regex", limits, GrammarRequest::Kind::Regex, "a regular expression string"), at + ".regex"});
  if (const ordered_json* c = field(*so, "choice")) found.push_back({choice_of(*c, at + ".choice", limits), at + ".choice"});
  if (const ordered_json* g = field(*so, "grammar"))
    found.push_back({text_kind(*g, at + ".grammar", limits, GrammarRequest::Kind::Gbnf, "a GBNF grammar string"), at + ".grammar"});
  if (const ordered_json* o = field(*so, "json_object"); o && o->get<bool>()) {
    GrammarRequest r;
    r.kind = GrammarRequest::Kind::JsonObject;
    found.push_back({std::move(r), at + ".json_object"});
  }
  if (found.empty())
    throw bad_param(at, "structured_outputs must set one of json, regex, choice, grammar or json_object", "missing_required_parameter");
  if (found.size() > 1)
    throw bad_param(found[1].param, found[0].param + " and " + found[1].param + " both constrain the output; send one");
  return std::move(found[0]);
}

// vLLM's older fields (removed there in v0.12, still sent by older clients).
std::vector<OutputConstraint> guided_fields(const ordered_json& body, const Limits& limits) {
  if (field(body, "guided_whitespace_pattern"))
    throw bad_param("guided_whitespace_pattern", "guided_whitespace_pattern is not supported (the output's JSON is compact, "
                                                 "without whitespace: docs/structured-output.md)", "unsupported_value");
  if (const ordered_json* b = field(body, "guided_decoding_backend"); b && !b->is_string())
    throw bad_param("guided_decoding_backend", "'guided_decoding_backend' must be a string", "invalid_type");
  std::vector<OutputConstraint> found;
  if (const ordered_json* j = field(body, "guided_json")) found.push_back({schema_of(*j, "guided_json", limits, true), "guided_json"});
  if (const ordered_json* r = field(body, "guided_regex"))
    found.push_back({text_kind(*r, "guided_regex", limits, GrammarRequest::Kind::Regex, "a regular expression string"), "guided_regex"});
  if (const ordered_json* c = field(body, "guided_choice")) found.push_back({choice_of(*c, "guided_choice", limits), "guided_choice"});
  if (const ordered_json* g = field(body, "guided_grammar"))
    found.push_back({text_kind(*g, "guided_grammar", limits, GrammarRequest::Kind::Gbnf, "a GBNF grammar string"), "guided_grammar"});
  return found;
}

}  // namespace

const char* const kOutputConstraintFields[] = {"response_format", "structured_outputs", "guided_json", "guided_regex",
                                               "guided_choice", "guided_grammar", "guided_decoding_backend",
                                               "guided_whitespace_pattern", nullptr};

std::optional<OutputConstraint> parse_output_constraint(const ordered_json& body, const Limits& limits) {
  std::vector<OutputConstraint> found;
  if (auto rf = response_format(body, limits)) found.push_back(std::move(*rf));
  if (auto so = structured_outputs(body, limits)) found.push_back(std::move(*so));
  for (OutputConstraint& g : guided_fields(body, limits)) found.push_back(std::move(g));
  if (found.empty()) return std::nullopt;
  if (found.size() > 1)
    throw bad_param(found[1].param, found[0].param + " and " + found[1].param + " both constrain the output; send one");
  return std::move(found[0]);
}

ApiError grammar_error(const std::string& param, const grammar::GrammarError& e) {
  std::string message = param + ": " + e.what();
  if (!e.construct().empty() && message.find(e.construct()) == std::string::npos) message += " [" + e.construct() + "]";
  return ApiError(400, message, param, "invalid_grammar");
}

namespace {

// On a pool thread, within `budget`. A GrammarError becomes the 400 of the part it came from
// (each part compiled alone, within what is left of the budget); the budget's own error and a
// cancellation go up as they are (the pool counts them).
std::shared_ptr<const grammar::CompiledGrammar> compile_now(grammar::GrammarService& service, const OutputConstraint& c,
                                                            const grammar::CompileBudget& budget) {
  const double cpu0 = grammar::thread_cpu_seconds();
  try {
    return service.get(c.grammar, budget);
  } catch (const grammar::GrammarError& e) {
    if (e.construct() == "budget") throw;
    const double left = budget.cpu_seconds - (grammar::thread_cpu_seconds() - cpu0);
    if (budget.cpu_seconds <= 0 || left > 0) {
      grammar::BudgetScope scope(grammar::CompileBudget{budget.cpu_seconds > 0 ? left : 0, budget.cancelled});
      for (const auto& [param, part] : c.sources) {
        try {
          grammar::build_automaton(grammar::to_grammar(part));
        } catch (const grammar::GrammarError& alone) {
          if (alone.construct() == "budget") break;
          throw grammar_error(param, alone);
        }
      }
    }
    throw grammar_error(c.param, e);
  }
}

// What a compile that threw answers.
ApiError compile_failure(const OutputConstraint& c, std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const ApiError& e) {
    return e;
  } catch (const grammar::GrammarError& e) {
    return grammar_error(c.param, e);
  } catch (const grammar::CompileCancelled&) {
    return ApiError(503, "the server is shutting down", "", "shutting_down");
  } catch (const std::exception& e) {
    return ApiError(500, std::string("internal error: ") + e.what(), "", "internal_error");
  }
}

}  // namespace

std::shared_ptr<std::atomic<bool>> compile_grammar_async(grammar::GrammarService* service, std::shared_ptr<const OutputConstraint> c,
                                                         std::function<void(CompileOutcome)> done) {
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  if (!service)
    throw bad_param(c->param, "this model has no tokenizer.json: structured output needs its vocabulary", "unsupported_value");
  auto work = [service, c, done](const grammar::CompileBudget& budget) {
    CompileOutcome o;
    o.grammar = compile_now(*service, *c, budget);
    done(std::move(o));
  };
  auto failed = [c, done](std::exception_ptr error) {
    CompileOutcome o;
    o.error = compile_failure(*c, error);
    done(std::move(o));
  };
  if (!service->submit(std::move(work), std::move(failed), cancelled)) {
    CompileOutcome o;
    o.error = ApiError(429, "too many grammar compiles are waiting; retry shortly", c->param, "overloaded");
    done(std::move(o));
  }
  return cancelled;
}

std::shared_ptr<const grammar::CompiledGrammar> compile_grammar(grammar::GrammarService* service, const OutputConstraint& c) {
  std::promise<CompileOutcome> promise;
  std::future<CompileOutcome> future = promise.get_future();
  compile_grammar_async(service, std::make_shared<OutputConstraint>(c), [&promise](CompileOutcome o) { promise.set_value(std::move(o)); });
  CompileOutcome o = future.get();
  if (o.error) throw *o.error;
  return o.grammar;
}

}  // namespace exspec::http
