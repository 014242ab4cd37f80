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
#include "app/args.h"
#include "app/commands.h"
#include "model/decoder.h"
#include "model/greedy.h"
#include "model/initial_thread.h"
#include "model/runtime.h"
#include "model/tokenizer/tokenizer.h"
#include "model/io_util.h"

namespace exspec {

int cmd_generate(int argc, char** argv, int first) {
  Args a(argc, argv, first,
         {"model", "draft", "mode", "speculate", "draft-tokens", "min-draft-tokens", "max-draft-tokens", "window", "slots", "min-group-fill", "max-wait", "context", "prefill-chunk", "block-size", "dtype", "device",
          "max-tokens", "batch", "prompt", "prompt-ids", "prompts-file", "threads", "torch-threads", "stats", "temperature", "top-p", "top-k",
          "min-p", "seed", "logprobs", "n", "presence-penalty", "frequency-penalty", "repetition-penalty", "logit-bias",
          "min-tokens", "stop-token-ids"},
         {"help", "sort-by-length", "oracle", "no-overlap", "ignore-eos", "no-prefix-cache", "no-slot-moves"});
  if (a.has("help")) {
    std::cout
        << "exspec generate --model DIR [--draft DIR] [--mode nonspec|eqspec|exspec|inplace] [--speculate model|ngram]\n"
           "                [--draft-tokens K|auto] [--min-draft-tokens N] [--max-draft-tokens N] [--batch B] [--window W] [--slots N] [--sort-by-length]\n"
           "                [--context N] [--prefill-chunk N] [--block-size N] [--no-prefix-cache] [--no-slot-moves]\n"
           "                [--min-group-fill F] [--max-wait STEPS] [--stats FILE.json]\n"
           "                [--dtype float64|float32|bfloat16|float16|int8] [--device cpu|cuda]\n"
           "                [--max-tokens N] [--threads N] [--torch-threads N] [--no-overlap]\n"
           "                [--temperature T] [--top-p P] [--top-k K] [--min-p P] [--seed S] [--n N] [--logprobs N]\n"
           "                [--presence-penalty P] [--frequency-penalty F] [--repetition-penalty R] [--logit-bias \"ID:B,...\"]\n"
           "                [--ignore-eos] [--min-tokens N] [--stop-token-ids \"ID,...\"]  (vLLM's stop rules)\n"
           "                (--prompt \"text\" ... | --prompt-ids \"1,2,3\" ... | --prompts-file F.jsonl)\n"
           "prints {\"index\", \"token_ids\", \"text\", \"finish_reason\"} per prompt, one JSON object a line\n"
           "(\"text\" when the model directory has a tokenizer.json; special tokens such as the EOS\n"
           "that ended it are left out of it, as by the server). Prompts: --prompt texts first, then\n"
           "--prompt-ids, then the file's lines.\n"
           "Runs on the actor pipeline (the server's engine). mode defaults to inplace, with --draft or\n"
           "without (plain steps, K = 0, batched continuously); --oracle uses the plain loop\n"
           "(model/greedy.cpp) instead: plain decoding, the definition every mode must equal.\n"
           "inplace: --context N positions a slot (default: the longest prompt + --max-tokens), prompts\n"
           "stored --prefill-chunk N tokens a forward (default 256).\n"
           "--speculate ngram (inplace, no --draft): drafts by prompt lookup in each sequence's own text.\n"
           "--no-overlap keeps one batch in flight (no drafting of batch t+1 during verification of t).\n"
           "--temperature > 0 samples (prompt i uses seed S + i; --n N gives it N choices, lines i * N + j);\n"
           "the output equals plain sampling with the same seeds in every mode. --logprobs N adds\n"
           "\"logprobs\" (the target's log-softmax, top N) to each line. See docs/speculation.md.\n";
    return 0;
  }
  const std::string model_dir = a.need("model");
  std::optional<Tokenizer> tokenizer;
  if (file_exists(model_dir + "/tokenizer.json")) tokenizer = Tokenizer::load(model_dir);
  std::vector<std::vector<int64_t>> prompts;
  for (const auto& text : a.all("prompt")) {
    if (!tokenizer) throw std::invalid_argument("--prompt needs " + model_dir + "/tokenizer.json");
    prompts.push_back(tokenizer->encode(text));
  }
  for (auto& p : read_prompt_ids(a)) prompts.push_back(std::move(p));
  if (prompts.empty()) throw std::invalid_argument("no prompts: give --prompt, --prompt-ids or --prompts-file");
  EngineOptions eo;
  eo.model_dir = model_dir;
  eo.dtype = a.get("dtype", "float32");
  eo.device = a.get("device", "cpu");
  eo.torch_threads = static_cast<int>(a.get_int("torch-threads", 1));
  if (a.has("torch-threads")) eo.initial_threads = eo.torch_threads;
  eo.blas_threads = static_cast<int>(a.get_int("threads", 0));
  eo.overlap = !a.has("no-overlap");
  eo.max_queue = prompts.size() + 1;
  EngineConfig& ec = eo.decoding;
  if (a.has("oracle") && a.has("mode") && a.get("mode", "") != "nonspec")
    throw std::invalid_argument("--oracle is plain decoding: it takes no --mode (or --mode nonspec)");
  if (a.has("mode")) ec.mode = parse_mode(a.get("mode", ""));
  else if (a.has("oracle")) ec.mode = Mode::NonSpec;
  if (a.has("speculate")) ec.speculate = parse_speculate(a.get("speculate", ""));
  if (a.has("draft-tokens")) parse_draft_tokens(a.get("draft-tokens", ""), ec);
  ec.min_draft_tokens = a.get_int("min-draft-tokens", ec.min_draft_tokens);
  ec.max_draft_tokens = a.get_int("max-draft-tokens", ec.max_draft_tokens);
  ec.batch_size = a.get_int("batch", 1);
  if (ec.mode == Mode::InPlace && a.has("window"))
    throw std::invalid_argument("--window is exspec's window; in place the KV slots are --slots");
  ec.window = a.get_int("window", std::max<int64_t>(2 * ec.batch_size, 1));
  ec.slots = a.get_int("slots", std::max<int64_t>(2 * ec.batch_size, 1));
  ec.sort_by_length = a.has("sort-by-length");
  if (a.has("min-group-fill")) ec.min_group_fill = std::stod(a.get("min-group-fill", ""));
  ec.max_wait = a.get_int("max-wait", ec.max_wait);
  if (ec.mode != Mode::NonSpec) eo.draft_dir = a.get("draft", "");
  ec.draft = !eo.draft_dir.empty();
  const int64_t max_tokens = a.get_int("max-tokens", 32);
  // In place, the slots need hold no more than the longest sequence this run makes.
  size_t longest_prompt = 0;
  for (const auto& p : prompts) longest_prompt = std::max(longest_prompt, p.size());
  ec.context = a.get_int("context", ec.mode == Mode::InPlace ? static_cast<int64_t>(longest_prompt) + max_tokens : 0);
  ec.prefill_chunk = a.get_int("prefill-chunk", ec.prefill_chunk);
  ec.block_size = a.get_int("block-size", ec.block_size);
  ec.prefix_cache = !a.has("no-prefix-cache");
  ec.slot_moves = !a.has("no-slot-moves");
  SamplingParams sp;
  sp.temperature = a.has("temperature") ? std::stod(a.get("temperature", "")) : 0.0;
  sp.top_p = a.has("top-p") ? std::stod(a.get("top-p", "")) : 1.0;
  sp.top_k = a.get_int("top-k", 0);
  sp.min_p = a.has("min-p") ? std::stod(a.get("min-p", "")) : 0.0;
  sp.logprobs = a.get_int("logprobs", -1);
  sp.presence_penalty = a.has("presence-penalty") ? std::stod(a.get("presence-penalty", "")) : 0.0;
  sp.frequency_penalty = a.has("frequency-penalty") ? std::stod(a.get("frequency-penalty", "")) : 0.0;
  sp.repetition_penalty = a.has("repetition-penalty") ? std::stod(a.get("repetition-penalty", "")) : 1.0;
  {
    std::stringstream lb(a.get("logit-bias", ""));
    for (std::string item; std::getline(lb, item, ',');) {
      const size_t colon = item.find(':');
      if (colon == std::string::npos) throw std::invalid_argument("--logit-bias wants ID:BIAS,...");
      sp.logit_bias.emplace_back(std::stoll(item.substr(0, colon)), std::stod(item.substr(colon + 1)));
    }
  }
  const uint64_t seed = static_cast<uint64_t>(a.get_int("seed", 0));
  const size_t n = static_cast<size_t>(std::max<int64_t>(1, a.get_int("n", 1)));
  {  // n choices of each prompt: the prompts repeat, the choice index tells them apart
    std::vector<std::vector<int64_t>> all;
    for (const auto& p : prompts)
      for (size_t j = 0; j < n; ++j) all.push_back(p);
    prompts = std::move(all);
  }
  const bool ignore_eos = a.has("ignore-eos");
  const int64_t min_tokens = a.get_int("min-tokens", 0);
  const std::vector<int64_t> stop_ids = parse_id_list(a.get("stop-token-ids", ""));
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
  if (a.has("oracle")) {
    configure_threads(eo.torch_threads, eo.blas_threads);
    check_blas();
    LoadOptions lo;
    lo.dtype = parse_dtype(eo.dtype);
    lo.device = parse_device(eo.device);
    auto model = Decoder::load(eo.model_dir, lo);
    std::vector<SeqRequest> reqs;
    for (size_t i = 0; i < prompts.size(); ++i) reqs.push_back(request(prompts[i], i, model->config().eos_ids));
    const auto t0 = std::chrono::steady_clock::now();
    results = greedy_generate(*model, reqs, ec.batch_size);
    stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& r : results) stats.committed += static_cast<int64_t>(r.tokens.size());
    stats.sequences = static_cast<int64_t>(results.size());
  } else {
    auto engine = Engine::start(eo);
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
  if (a.has("stats")) {
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
    std::ofstream(a.get("stats", "")) << head.dump(2) << "\n";
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
