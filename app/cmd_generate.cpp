#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <nlohmann/json.hpp>

#include "actors/collector.h"
#include "actors/engine.h"
#include "app/command_line.h"
#include "app/commands.h"
#include "config/engine_options.h"
#include "config/sampling_fields.h"
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

// The sampling flags as the server's request fields, validated by their one owner
// (config/sampling_fields.h); each flag left out takes the checkpoint's default where it has one.
SamplingParams sampling_flags(const CommandLine& cl, const GenerationDefaults& d) {
  static const std::pair<const char*, const char*> kReals[] = {
      {"temperature", "temperature"}, {"top-p", "top_p"}, {"min-p", "min_p"}, {"presence-penalty", "presence_penalty"},
      {"frequency-penalty", "frequency_penalty"}, {"repetition-penalty", "repetition_penalty"}};
  nlohmann::ordered_json body{{"seed", cl.integer("seed")}};
  for (const auto& [flag, field] : kReals)
    if (cl.given(flag)) body[field] = cl.real(flag);
  if (cl.given("top-k")) body["top_k"] = cl.integer("top-k");
  if (cl.integer("logprobs") >= 0) body["logprobs"] = cl.integer("logprobs");
  std::stringstream lb(cl.text("logit-bias"));
  for (std::string item; std::getline(lb, item, ',');) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("--logit-bias wants ID:BIAS,...");
    body["logit_bias"][item.substr(0, colon)] = std::stod(item.substr(colon + 1));
  }
  try {  // the engine checks the ids against the model's vocabulary
    return parse_sampling_fields(body, /*chat=*/false, std::numeric_limits<int64_t>::max(), d).params;
  } catch (const SamplingFieldError& e) {
    std::string flag = e.param;
    std::replace(flag.begin(), flag.end(), '_', '-');
    throw std::invalid_argument("--" + flag + ": " + e.what());
  }
}

// What one run asks for, read from the command line.
struct Run {
  Settings s{Command::Generate};
  std::optional<Tokenizer> tokenizer;
  std::vector<std::vector<int64_t>> prompts;  // each prompt n times: the choice index tells them apart
  size_t n = 1;
  int64_t max_tokens = 0;
  SamplingParams sampling;
  EngineOptions eo;
  bool oracle = false;
};

// --prompt texts first, then --prompt-ids, then the files' lines.
std::vector<std::vector<int64_t>> read_prompts(const CommandLine& cl, const Run& run) {
  std::vector<std::vector<int64_t>> prompts;
  for (const auto& text : cl.all("prompt")) {
    if (!run.tokenizer) throw std::invalid_argument("--prompt needs " + run.s.model + "/tokenizer.json");
    prompts.push_back(run.tokenizer->encode(text));
  }
  for (auto& p : read_prompt_ids(cl.all("prompt-ids"), cl.all("prompts-file"))) prompts.push_back(std::move(p));
  if (prompts.empty()) throw std::invalid_argument("no prompts: give --prompt, --prompt-ids or --prompts-file");
  return prompts;
}

// The engine's options for this run: the queue holds every sequence, and in place the slots
// need hold no more than the longest sequence it makes.
EngineOptions run_engine_options(const CommandLine& cl, Run& run) {
  run.s.engine.max_queue = run.prompts.size() * run.n + 1;
  EngineOptions eo = engine_options(run.s);
  // --torch-threads given, even 1, is what the forwards on the initial thread get (serve: 1 means
  // every core): "before" in docs/performance.md is generate --torch-threads 1.
  if (cl.given("torch-threads")) eo.initial_threads = eo.torch_threads;
  EngineConfig& ec = eo.decoding;
  ec.draft = !eo.draft_dir.empty();
  size_t longest_prompt = 0;
  for (const auto& p : run.prompts) longest_prompt = std::max(longest_prompt, p.size());
  if (ec.mode == Mode::InPlace && !cl.given("context")) ec.context = static_cast<int64_t>(longest_prompt) + run.max_tokens;
  return eo;
}

Run read_run(const CommandLine& cl) {
  Run run;
  run.s = cl.settings();
  run.oracle = cl.given("oracle");
  if (run.oracle && !run.s.mode.empty() && run.s.mode != "nonspec")
    throw std::invalid_argument("--oracle is plain decoding: it takes no --mode (or --mode nonspec)");
  if (run.oracle) run.s.mode = "nonspec";
  if (Tokenizer::available(run.s.model)) run.tokenizer = Tokenizer::load(run.s.model);
  run.prompts = read_prompts(cl, run);
  // The checkpoint's recommended sampling, for the flags left out (as the server's requests).
  const GenerationDefaults defaults = generation_defaults(run.s.generation_config, run.s.model);
  if (!defaults.empty())
    std::cerr << "exspec generate: sampling defaults (--generation-config " << run.s.generation_config
              << "): " << defaults.describe() << "\n";
  run.max_tokens = cl.given("max-tokens") || !defaults.max_new_tokens ? cl.integer("max-tokens") : *defaults.max_new_tokens;
  run.n = static_cast<size_t>(cl.integer("n"));
  run.sampling = sampling_flags(cl, defaults);
  run.eo = run_engine_options(cl, run);
  std::vector<std::vector<int64_t>> all;
  for (const auto& p : run.prompts)
    for (size_t j = 0; j < run.n; ++j) all.push_back(p);
  run.prompts = std::move(all);
  return run;
}

// Prompt i's request: choice i % n of the prompt seeded with seed + i / n.
std::vector<SeqRequest> requests(const CommandLine& cl, const Run& run, const std::vector<int64_t>& model_eos) {
  const std::vector<int64_t> stop_ids = parse_id_list(cl.text("stop-token-ids"));
  std::vector<SeqRequest> reqs;
  for (size_t i = 0; i < run.prompts.size(); ++i) {
    SeqRequest r{run.prompts[i], run.max_tokens, {}};
    r.sampling = run.sampling;
    r.sampling.seed = run.sampling.seed + i / run.n;
    r.sampling.choice = i % run.n;
    set_stop_rules(r, model_eos, cl.given("ignore-eos"), stop_ids, cl.integer("min-tokens"));
    reqs.push_back(std::move(r));
  }
  return reqs;
}

struct Outcome {
  std::vector<SeqResult> results;
  RunStats stats;
};

// Plain decoding by the reference loop (model/oracle/plain_decode.cpp), without the actors.
Outcome run_oracle(const CommandLine& cl, const Run& run) {
  configure_threads(run.eo.torch_threads, run.eo.blas_threads);
  check_blas();
  LoadOptions lo;
  lo.dtype = parse_dtype(run.eo.dtype);
  lo.device = parse_device(run.eo.device);
  lo.long_context = parse_longrope(run.eo.longrope);
  auto model = Decoder::load(run.eo.model_dir, lo);
  Outcome out;
  const auto t0 = std::chrono::steady_clock::now();
  out.results = plain_decode(*model, requests(cl, run, model->config().eos_ids), run.eo.decoding.batch_size);
  out.stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& r : out.results) out.stats.committed += static_cast<int64_t>(r.tokens.size());
  out.stats.sequences = static_cast<int64_t>(out.results.size());
  return out;
}

// The server's engine on the actor pipeline.
Outcome run_engine(const CommandLine& cl, const Run& run) {
  auto engine = Engine::start(run.eo);
  device_timeline::enable(cl.given("stats"));  // after the engine's warm-up: the run's forwards only
  auto sink = std::make_shared<Collector>();
  std::vector<SeqId> ids;
  const InitialThreadPark park;  // the first jobs wait for it (model/initial_thread.h)
  const auto t0 = std::chrono::steady_clock::now();
  // One message for all: fixed (nonspec/eqspec) batches are full from the first step.
  for (const SubmitResult& r : engine->submit_many(requests(cl, run, engine->info().eos_ids), 0, sink)) {
    if (r.status != SubmitStatus::Ok) throw std::invalid_argument(r.message);
    ids.push_back(r.id);
  }
  // Meanwhile this (initial) thread runs plain decoding's forwards with every core, or with
  // --torch-threads when given (model/initial_thread.h).
  serve_on_initial_thread([&] { return sink->wait_for(ids.size(), std::chrono::milliseconds(0)); },
                          initial_threads(run.eo.initial_threads));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Outcome out;
  auto got = sink->results();
  for (size_t i = 0; i < ids.size(); ++i) {
    out.results.push_back(got.at(ids[i]));
    if (!out.results[i].error.empty()) throw std::runtime_error("prompt " + std::to_string(i) + ": " + out.results[i].error);
  }
  out.stats = engine->stats().totals;
  out.stats.wall_s = wall;
  engine->shutdown(true);
  return out;
}

// One JSON line a sequence on stdout.
void print_results(const Run& run, const std::vector<SeqResult>& results) {
  for (size_t i = 0; i < results.size(); ++i) {
    nlohmann::ordered_json j{{"index", i}, {"token_ids", results[i].tokens}};
    // Special tokens (the EOS that ended it) stay in token_ids, not in the text: as the server's
    // default (skip_special_tokens), and vLLM's.
    if (run.tokenizer) j["text"] = run.tokenizer->decode(results[i].tokens, /*skip_special_tokens=*/true);
    j["finish_reason"] = to_string(results[i].finish);
    if (run.sampling.logprobs >= 0) {
      nlohmann::ordered_json lps = nlohmann::ordered_json::array();
      for (const auto& lp : results[i].logprobs) lps.push_back({{"token_id", lp.token}, {"logprob", lp.logprob}, {"top", lp.top}});
      j["logprobs"] = lps;
    }
    std::cout << j.dump() << "\n";
  }
}

// --stats FILE: the run's settings and statistics; and a summary line on stderr.
void report(const CommandLine& cl, const Run& run, const Outcome& out) {
  const EngineConfig& ec = run.eo.decoding;
  const RunStats& stats = out.stats;
  if (cl.given("stats")) {
    nlohmann::ordered_json head{{"mode", mode_name(ec.mode)},
                                {"batch_size", ec.batch_size},
                                {"draft_tokens", draft_tokens_name(ec)},
                                {ec.mode == Mode::InPlace ? "slots" : "window", live_sequences(ec)},
                                {"dtype", run.eo.dtype},
                                {"temperature", run.sampling.temperature},
                                {"sort_by_length", ec.sort_by_length},
                                {"overlap", run.eo.overlap}};
    head.update(nlohmann::ordered_json::parse(stats.to_json()));
    if (const device_timeline::Reading d = device_timeline::read(); d.recorded)  // a CUDA build's
      head["device"] = {{"forwards", d.forwards}, {"busy_ms", d.busy_ms}, {"span_ms", d.span_ms},
                        {"idle_fraction", d.idle_fraction()}};
    std::ofstream(cl.text("stats")) << head.dump(2) << "\n";
  }
  std::cerr << mode_name(ec.mode) << ": " << stats.committed << " tokens for " << out.results.size() << " prompts in "
            << stats.wall_s << " s (" << stats.tokens_per_s() << " tokens/s)";
  if (drafts(ec))
    std::cerr << ", acceptance " << stats.acceptance_rate() << ", tokens/verify " << stats.tokens_per_verification()
              << ", grouping " << stats.grouping_rate() << ", overhead " << stats.overhead_share();
  std::cerr << "\n";
}

}  // namespace

int cmd_generate(int argc, char** argv, int first) {
  const auto cl = read_command_line(Command::Generate, argc, argv, first, kUsage, kAbout);
  if (!cl) return 0;
  const Run run = read_run(*cl);
  const Outcome out = run.oracle ? run_oracle(*cl, run) : run_engine(*cl, run);
  print_results(run, out.results);
  report(*cl, run, out);
  return 0;
}

}  // namespace exspec
