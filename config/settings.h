// The settings of exspec serve, batch and generate: what config/exspec.json holds, with the
// command line over it. The option table (config/options.cpp) writes the engine's options
// straight into `engine`, whose defaults are the engine's own (actors/engine.h,
// actors/scheduler/engine_config.h); every other default is the table's: the members here start
// at zero, and Settings(command) fills in that command's defaults. Torch-free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "actors/engine.h"

namespace exspec {

// The subcommands that take settings; bits, so that an option can name several.
enum class Command : unsigned { Serve = 1, Batch = 2, Generate = 4 };
const char* command_name(Command c);

struct Limits {  // "limits" in the config file
  size_t max_body_bytes{};      // request bodies above this get 413
  int64_t max_prompt_tokens{};  // per prompt; 0 = the model's context
  int64_t max_tokens{};         // largest max_tokens a request may ask for
  int64_t default_max_tokens{};  // completions without max_tokens (OpenAI's default)
  size_t max_prompts{};         // prompts in one completions request
  size_t max_stop{};            // stop strings per request
  size_t max_grammar_bytes{};   // a request's JSON schema, regex, GBNF grammar or choice list
  size_t max_messages{};        // chat messages per request
  int64_t idle_timeout_s{};     // connections idle this long are closed (a body or response that stalls too)
  int64_t shutdown_timeout_s{};  // drain this long on SIGINT/SIGTERM, then cancel the rest (--shutdown-drain)
  size_t max_file_bytes{};      // POST /v1/files (the request also obeys max_body_bytes)
  size_t max_batch_lines{};     // requests in one batch input file
  size_t max_active_batches{};  // batches not yet completed/failed/cancelled
  size_t batch_in_flight{};     // batch lines submitted at once; 0 = 2 * the live sequences
  size_t max_connections{};     // open connections; beyond: 503 at once; 0 = the file limit less 64
  int64_t batch_window_s{};     // what completion_window "24h" lasts (lower: tests, or stricter)
  // Request work (http/request_work.h): bodies above inline_body_bytes are read on request_threads
  // threads, request_nice below the engine's priority (the grammar compile pool too), at most
  // max_request_queue waiting (beyond: 429).
  size_t inline_body_bytes{};
  int request_threads{};
  int request_nice{};
  size_t max_request_queue{};
};

struct Settings {
  // The command's defaults (the option table's).
  explicit Settings(Command command = Command::Serve);

  std::string host;
  int port{};
  std::string model, draft;          // empty model: the demo pair
  std::string served_model_name;     // empty: the model directory's name
  std::string cache_dir;             // empty: default_cache_dir()
  std::string data_dir;              // Files/Batches state (SQLite + files); empty: those APIs are off
  std::string job_store;             // "postgresql://...": Files/Batches shared by replicas (data_dir unused)
  std::string replica;               // this replica's name: a label on /metrics, the owner of its leases
  int64_t batch_lease_ms{};          // shared store: a claimed batch line is ours this long without renewal
  std::string api_key;               // empty: no authentication
  bool web_page{};                   // the chat page at GET / (http/web/index.html)
  std::string chat_template;         // auto (the model's) | chatml | a Jinja template file
  std::string tool_call_parser;      // auto (from the template) | hermes | llama3_json | deepseek_v3 | mistral | none
  std::string generation_config;     // auto (the model's generation_config.json) | none | a directory
  bool split_special_tokens{};       // special-token text in prompts stays text (default: becomes the tokens)
  size_t grammar_cache{};            // compiled grammars kept (structured output, tool_choice required)
  std::string grammar_cache_memory;  // and the bytes they may take ("256M"; "0": no bound)
  double grammar_compile_budget{};   // CPU seconds one grammar compile may take (0: no bound)
  // What engine_options() resolves rather than copies: names parsed, sizes derived, the budget measured.
  std::string mode;                  // empty: inplace
  std::string speculate;             // model | ngram (prompt lookup, no draft model)
  std::string draft_tokens;          // "auto" (adaptive K) or a number
  std::string draft_screen;          // "auto" (where the draft's head pays for it) or N candidates (0: off)
  int64_t batch{}, window{}, slots{};  // 0: the defaults engine_options() derives
  std::string row_buckets, cuda_graphs;  // inplace: auto | on | off (model/step_runner.h)
  std::string plan_ahead;                // inplace: auto | on | off (actors/scheduler/plan_ahead.h)
  std::string kv_cache_memory;       // inplace: the KV stores' budget ("512M", "4G", "auto", "0")
  // The rest of the engine's options, as the table writes them (model_dir, draft_dir and the
  // fields above are engine_options()'s).
  EngineOptions engine;
  int http_threads{};
  Limits limits;
};

// Reads a JSON config file over `into` (keys absent keep their value). Unknown keys, wrong types
// and values out of range are errors naming the key and the file.
void load_config_file(const std::string& path, Settings& into);

// Where the demo pair is made when none is shipped: $XDG_CACHE_HOME/exspec or ~/.cache/exspec.
std::string default_cache_dir();

}  // namespace exspec
