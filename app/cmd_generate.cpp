#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>
#include <iostream>
#include <optional>
#include <sstream>
#include <nlohmann/json.hpp>

#include "actors/collector.h"
#include "actors/engine.h"
#include "app/command_line.h"
#include "app/commands.h"
#include "config/engine_options.h"
#include "model/decoder.h"
#include "model/device_timeline.h"
#include "model/generation_defaults.h"
#include "model/oracle/plain_decode.h"
#include "model/initial_thread.h"
#include "model/runtime.h"
#include "model/tokenizer/tokenizer.h"
#include "model/io_util.h"

namespace exspec {
namespace {

// What --help says before the flags.
const char* const kUsage = "--model DIR [--draft DIR] [flags] (--prompt \"text\" ... | --prompt-ids \"1,2,3\" ... | --prompts-file F.jsonl)";
const char* const kAbout =
    "prints {\"index\", \"token_ids\", \"text\", \"finish_reason\"} per prompt, one JSON object a line\n"
    "(\"text\" when the model directory has a tokenizer.json; special tokens such as the EOS\n"
    "that ended it are left out of it, as by the server). Prompts: --prompt texts first, then\n"
    "--prompt-ids, then the file's lines.\n"
    "Runs on the actor pipeline (the server's engine). mode defaults to inplace, with --draft or\n"
    "without (plain steps, K = 0, batched continuously); --oracle uses the plain loop\n"
    "(model/oracle/plain_decode.cpp) instead: plain decoding, the definition every mode must equal.\n"
    "--temperature > 0 samples (prompt i uses seed S + i; --n N gives it N choices, lines i * N + j);\n"
    "the output equals plain sampling with the same seeds in every mode. See docs/speculation.md.\n"
    "The sampling flags and --max-tokens left out take the model's generation_config.json values\n"
    "where it sets them (--generation-config auto; none: the defaults below). See docs/serving.md.\n";

// The sampling flags; each one left out takes the checkpoint's default where it has one.
SamplingParams sampling_flags(const CommandLine& cl, const GenerationDefaults& d) {
  auto real = [&cl](const char* flag, const std::optional<double>& dflt) {
    return cl.given(flag) || !dflt ? cl.real(flag) : *dflt;
  };
  SamplingParams sp;
  sp.temperature = real("temperature", d.temperature);
  sp.top_p = real("top-p", d.top_p);
  sp.top_k = cl.given("top-k") || !d.top_k ? cl.integer("top-k") : *d.top_k;
  if (sp.top_k < 0) sp.top_k = 0;  // -1: off, as 0
  sp.min_p = real("min-p", d.min_p);
  sp.logprobs = cl.integer("logprobs");
  sp.presence_penalty = real("presence-penalty", d.presence_penalty);
  sp.frequency_penalty = real("frequency-penalty", d.frequency_penalty);
  sp.repetition_penalty = real("repetition-penalty", d.repetition_penalty);
  std::stringstream lb(cl.text("logit-bias"));
  for (std::string item; std::getline(lb, item, ',');) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("--logit-bias wants ID:BIAS,...");
    sp.logit_bias.emplace_back(std::stoll(item.substr(0, colon)), std::stod(item.substr(colon + 1)));
  }
  return sp;
}

}  // namespace

int cmd_generate(int argc, char** argv, int first) {
  const auto cl = read_command_line(Command::Generate, argc, argv, first, kUsage, kAbout);
  if (!cl) return 0;
  Settings s = cl->settings();
  if (cl->given("oracle") && !s.mode.empty() && s.mode != "nonspec")
    throw std::invalid_argument("--oracle is plain decoding: it takes no --mode (or --mode nonspec)");
  if (cl->given("oracle")) s.mode = "nonspec";
  const std::string model_dir = s.model;
  std::optional<Tokenizer> tokenizer;
  if (Tokenizer::available(model_dir)) tokenizer = Tokenizer::load(model_dir);
  std::vector<std::vector<int64_t>> prompts;
  for (const auto& text : cl->all("prompt")) {
    if (!tokenizer) throw std::invalid_argument("--prompt needs " + model_dir + "/tokenizer.json");
    prompts.push_back(tokenizer->encode(text));
  }
  for (auto& p : read_prompt_ids(cl->all("prompt-ids"), cl->all("prompts-file"))) prompts.push_back(std::move(p));
  if (prompts.empty()) throw std::invalid_argument("no prompts: give --prompt, --prompt-ids or --prompts-file");
  // The checkpoint's recommended sampling, for the flags left out (as the server's requests).
  const GenerationDefaults defaults = generation_defaults(s.generation_config, model_dir);
  if (!defaults.empty())
    std::cerr << "exspec generate: sampling defaults (--generation-config " << s.generation_config
              << "): " << defaults.describe() << "\n";
  const int64_t max_tokens = cl->given("max-tokens") || !defaults.max_new_tokens ? cl->integer("max-tokens")
                                                                                 : *defaults.max_new_tokens;
  const size_t n = static_cast<size_t>(cl->integer("n"));
  s.max_queue = prompts.size() * n + 1;
  EngineOptions eo = engine_options(s);
  // --torch-threads given, even 1, is what the forwards on the initial thread get (serve: 1 means
  // every core): "before" in docs/performance.md is generate --torch-threads 1.
  if (cl->given("torch-threads")) eo.initial_threads = eo.torch_threads;
  EngineConfig& ec = eo.decoding;
  ec.draft = !eo.draft_dir.empty();
  // In place, the slots need hold no more than the longest sequence this run makes.
  size_t longest_prompt = 0;
  for (const auto& p : prompts) longest_prompt = std::max(longest_prompt, p.size());
  if (ec.mode == Mode::InPlace && !cl->given("context")) ec.context = static_cast<int64_t>(longest_prompt) + max_tokens;
  const SamplingParams sp = sampling_flags(*cl, defaults);
  const uint64_t seed = static_cast<uint64_t>(cl->integer("seed"));
  {  // n choices of each prompt: the prompts repeat, the choice index tells them apart
    std::vector<std::vector<int64_t>> all;
    for (const auto& p : prompts)
      for (size_t j = 0; j < n; ++j) all.push_back(p);
    prompts = std::move(all);
  }
  const bool ignore_eos = cl->given("ignore-eos");
  const int64_t min_tokens = cl->integer("min-tokens");
  const std::vector<int64_t> stop_ids = parse_id_list(cl->text("stop-token-ids"));
  auto request = [&](const std::vector<int64_t>& p, size_t i, std::vector<int64_t> model_eos) {
    SeqRequest r{p, max_tokens, {}};
    r.sampling = sp;
    r.sampling.seed = seed + i / n;
    r.sampling.choice = i % n;
    set_stop_rules(r, std::move(model_eos), ignore_eos, stop_ids, min_tokens);
    return r;
  };

  std::vector<SeqResult> results(prompts.size());
  RunStats stats;
  if (cl->given("oracle")) {
    configure_threads(eo.torch_threads, eo.blas_threads);
    check_blas();
    LoadOptions lo;
    lo.dtype = parse_dtype(eo.dtype);
    lo.device = parse_device(eo.device);
    auto model = Decoder::load(eo.model_dir, lo);
    std::vector<SeqRequest> reqs;
    for (size_t i = 0; i < prompts.size(); ++i) reqs.push_back(request(prompts[i], i, model->config().eos_ids));
    const auto t0 = std::chrono::steady_clock::now();
    results = plain_decode(*model, reqs, ec.batch_size);
    stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& r : results) stats.committed += static_cast<int64_t>(r.tokens.size());
    stats.sequences = static_cast<int64_t>(results.size());
  } else {
    auto engine = Engine::start(eo);
    device_timeline::enable(cl->given("stats"));  // after the engine's warm-up: the run's forwards only
    auto sink = std::make_shared<Collector>();
    std::vector<SeqId> ids;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<SeqRequest> reqs;
    for (size_t i = 0; i < prompts.size(); ++i) reqs.push_back(request(prompts[i], i, engine->info().eos_ids));
    // One message for all: fixed (nonspec/eqspec) batches are full from the first step.
    for (const SubmitResult& r : engine->submit_many(std::move(reqs), 0, sink)) {
      if (r.status != SubmitStatus::Ok) throw std::invalid_argument(r.message);
      ids.push_back(r.id);
    }
    // Meanwhile this (initial) thread runs plain decoding's forwards with every core, or with
    // --torch-threads when given (model/initial_thread.h).
    serve_on_initial_thread([&] { return sink->wait_for(ids.size(), std::chrono::milliseconds(0)); },
                            initial_threads(eo.initial_threads));
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto got = sink->results();
    for (size_t i = 0; i < ids.size(); ++i) {
      results[i] = got.at(ids[i]);
      if (!results[i].error.empty()) throw std::runtime_error("prompt " + std::to_string(i) + ": " + results[i].error);
    }
    stats = engine->stats().totals;
    stats.wall_s = wall;
    engine->shutdown(true);
  }

  for (size_t i = 0; i < results.size(); ++i) {
    nlohmann::ordered_json j{{"index", i}, {"token_ids", results[i].tokens}};
    // Special tokens (the EOS that ended it) stay in token_ids, not in the text: as the server's
    // default (skip_special_tokens), and vLLM's.
    if (tokenizer) j["text"] = tokenizer->decode(results[i].tokens, /*skip_special_tokens=*/true);
    j["finish_reason"] = to_string(results[i].finish);
    if (sp.logprobs >= 0) {
      nlohmann::ordered_json lps = nlohmann::ordered_json::array();
      for (const auto& lp : results[i].logprobs) lps.push_back({{"token_id", lp.token}, {"logprob", lp.logprob}, {"top", lp.top}});
      j["logprobs"] = lps;
    }
    std::cout << j.dump() << "\n";
  }
  if (cl->given("stats")) {
    nlohmann::ordered_json s = nlohmann::ordered_json::parse(stats.to_json());
    nlohmann::ordered_json head{{"mode", mode_name(ec.mode)},
                                {"batch_size", ec.batch_size},
                                {"draft_tokens", draft_tokens_name(ec)},
                                {ec.mode == Mode::InPlace ? "slots" : "window", live_sequences(ec)},
                                {"dtype", eo.dtype},
                                {"temperature", sp.temperature},
                                {"sort_by_length", ec.sort_by_length},
                                {"overlap", eo.overlap}};
    head.update(s);
    if (const device_timeline::Reading d = device_timeline::read(); d.recorded)
      head["device"] = {{"forwards", d.forwards}, {"busy_ms", d.busy_ms}, {"span_ms", d.span_ms},
                        {"idle_fraction", d.idle_fraction()}};
    std::ofstream(cl->text("stats")) << head.dump(2) << "\n";
  }
  std::cerr << mode_name(ec.mode) << ": " << stats.committed << " tokens for " << results.size() << " prompts in "
            << stats.wall_s << " s (" << stats.tokens_per_s() << " tokens/s)";
  if (drafts(ec))
    std::cerr << ", acceptance " << stats.acceptance_rate() << ", tokens/verify " << stats.tokens_per_verification()
              << ", grouping " << stats.grouping_rate() << ", overhead " << stats.overhead_share();
  std::cerr << "\n";
  return 0;
}

}  // namespace exspec
