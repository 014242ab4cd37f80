#include "http/backend.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <thread>

#include "config/engine_options.h"
#include "model/gguf/gguf_file.h"
#include "model/tokenizer/grammar_vocab.h"

namespace exspec::http {

std::unique_ptr<Backend> load_backend(const Settings& cfg, const std::string& who) {
  auto b = std::make_unique<Backend>();
  namespace fs = std::filesystem;
  std::string why;
  // The tokenizer and chat template first: a template the interpreter cannot run refuses start-up
  // (naming its line) before the models load.
  if (Tokenizer::available(cfg.model)) {
    b->tokenizer = Tokenizer::load(cfg.model);
    b->chat = chat::load_chat_template(*b->tokenizer, cfg.chat_template, cfg.tool_call_parser);
    std::cerr << who << ": chat template: " << b->chat->source << ", tool calls: "
              << chat::tool_format_name(b->chat->tool_format) << "\n";
  } else {
    why = "the model directory has no tokenizer.json, so chat completions are not available";
    std::cerr << who << ": warning: " << why << "; prompts must be token ids\n";
  }
  // Before the models load: a value no request could send refuses start-up at once.
  GenerationDefaults defaults = generation_defaults(cfg.generation_config, cfg.model);
  std::cerr << who << ": sampling defaults (--generation-config " << cfg.generation_config
            << "): " << defaults.describe() << "\n";
  const EngineOptions eo = engine_options(cfg);
  size_t grammar_bytes = 0;
  try {
    grammar_bytes = static_cast<size_t>(parse_bytes(cfg.grammar_cache_memory));
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("grammar_cache_memory (--grammar-cache-memory): ") + e.what());
  }
  b->engine = Engine::start(eo);
  const ModelInfo& info = b->engine->info();
  std::string dir = cfg.model;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  // A directory's name, or a .gguf file's without the extension.
  const fs::path named = gguf::is_gguf_path(dir) ? fs::path(dir).stem() : fs::path(dir).filename();
  b->served_name = cfg.served_model_name.empty() ? named.string() : cfg.served_model_name;
  const EngineConfig& d = b->engine->options().decoding;  // as the engine runs it (draft or none)
  b->mode = mode_name(d.mode);
  b->draft_tokens = draft_tokens_name(d);
  ModelFacts& f = b->facts;
  f.tokenizer = b->tokenizer ? &*b->tokenizer : nullptr;
  f.chat = b->chat ? &*b->chat : nullptr;
  f.chat_error = why;
  // In place, the slots' context (what the KV cache budget let them hold): requests beyond it are
  // refused as beyond the model's, with the same error.
  f.context = d.mode == Mode::InPlace && d.context > 0 ? std::min(d.context, info.max_position_embeddings)
                                                       : info.max_position_embeddings;
  f.vocab = info.vocab_size;
  f.longrope_positions = info.longrope_positions;
  f.limits = cfg.limits;
  f.split_special_tokens = cfg.split_special_tokens;
  f.defaults = std::move(defaults);
  if (b->tokenizer) {
    // Structured output's vocabulary, built in the background: the server is ready meanwhile; a
    // constrained request waits for it. End tokens: the model's EOS and the chat template's end
    // of turn.
    std::vector<int64_t> ends = info.eos_ids;
    if (b->chat) ends.insert(ends.end(), b->chat->end_ids.begin(), b->chat->end_ids.end());
    // Compiles run on a small pool, each within its CPU budget: a quarter of the cores (at least
    // one), so that hostile schemas cannot take the CPU from decoding.
    grammar::CompileLimits limits;
    limits.budget_s = cfg.grammar_compile_budget;
    limits.nice = cfg.limits.request_nice;  // below decoding, as the request-work pool
    limits.threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u));
    const Tokenizer& tokenizer = *b->tokenizer;  // a copy shares its state (thread-safe)
    auto vocabulary = [tokenizer, ends] { return grammar::tokenizer_vocabulary(tokenizer, ends); };
    b->grammars = std::make_unique<grammar::GrammarService>(vocabulary, cfg.grammar_cache, grammar_bytes, [who](size_t tokens, double s) {
      std::cerr << who << ": structured output: the grammar vocabulary (" << tokens << " tokens) took " << s << " s\n";
    }, limits);
    f.grammars = b->grammars.get();
  }
  f.model_names = {b->served_name, cfg.model, dir};
  return b;
}

}  // namespace exspec::http
