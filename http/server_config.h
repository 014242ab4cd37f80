// The server's configuration: config/exspec.json (documented in config/README.md), then the
// command line on top. Torch-free.
#pragma once
#include <cstdint>
#include <string>

#include "actors/engine.h"

namespace exspec::http {

struct Limits {
  size_t max_body_bytes = 1 << 20;    // request bodies above this get 413
  int64_t max_prompt_tokens = 0;      // per prompt; 0 = the model's context
  int64_t max_tokens = 4096;          // largest max_tokens a request may ask for
  int64_t default_max_tokens = 16;    // completions without max_tokens (OpenAI's default)
  size_t max_prompts = 64;            // prompts in one completions request
  size_t max_stop = 4;                // stop strings per request (OpenAI: 4)
  size_t max_messages = 256;          // chat messages per request
  int64_t idle_timeout_s = 60;        // connections idle this long are closed (a body or response that stalls too)
  int64_t shutdown_timeout_s = 30;    // drain this long on SIGINT/SIGTERM, then cancel the rest
  size_t max_file_bytes = 200 << 20;  // POST /v1/files (the request also obeys max_body_bytes)
  size_t max_batch_lines = 50000;     // requests in one batch input file (OpenAI's limit)
  size_t max_active_batches = 16;     // batches not yet completed/failed/cancelled
  size_t batch_in_flight = 0;         // batch lines submitted at once; 0 = 2 * the live sequences
  size_t max_connections = 0;         // open connections; beyond: 503 at once; 0 = the file limit less 64
  int64_t batch_window_s = 24 * 3600;  // what completion_window "24h" lasts (lower: tests, or stricter)
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string model, draft;          // empty model: the demo pair in cache_dir
  std::string served_model_name;     // empty: the model directory's name
  std::string cache_dir;             // empty: $XDG_CACHE_HOME/exspec or ~/.cache/exspec
  std::string data_dir;              // Files/Batches state (SQLite + files); empty: those APIs are off
  std::string job_store;             // "postgresql://...": Files/Batches shared by replicas (data_dir unused)
  std::string replica;               // this replica's name: a label on /metrics, the owner of its leases
  int64_t batch_lease_ms = 30000;    // shared store: a claimed batch line is ours this long without renewal
  std::string api_key;               // empty: no authentication
  std::string chat_template = "auto";  // auto (the model's) | chatml | a Jinja template file
  std::string tool_call_parser = "auto";  // auto (from the template) | hermes | llama3_json | deepseek_v3 | mistral | none
  bool split_special_tokens = false;  // special-token text in prompts stays text (default: becomes the tokens)
  std::string dtype = "float32", device = "cpu";
  std::string mode;                  // empty: exspec with a draft, nonspec without
  std::string speculate = "model";   // model | ngram (prompt lookup, no draft model)
  std::string draft_tokens = "auto";  // "auto" (adaptive K) or a number
  int64_t min_draft_tokens = 0, max_draft_tokens = 8;  // bounds of auto
  // batch 0: every slot in place, kPaperBatch in the paper's modes; window (exspec) and slots
  // (in place) 0: 2 * batch.
  int64_t batch = 0, window = 0, slots = 0;
  double min_group_fill = 0.5;
  int64_t max_wait = 8;
  int64_t context = 0, prefill_chunk = 256;  // inplace: positions per slot (0: the model's), chunk
  bool sort_by_length = false, overlap = true;
  bool prefix_cache = true;          // inplace: newcomers take the cached blocks of their prompt's prefix
  int64_t block_size = 16;           // inplace: positions per KV block
  bool slot_moves = true;            // inplace: a step's scattered rows move into consecutive slots
  std::string kv_cache_memory = "auto";  // inplace: the KV stores' budget ("512M", "4G"); auto:
                                         // half the memory available at start; "0": no budget
  size_t max_queue = 1024;
  int http_threads = 2, scheduler_threads = 2, torch_threads = 1, blas_threads = 0;
  Limits limits;
};

// Reads a JSON config file over `into` (keys absent keep their value). Unknown keys and wrong
// types are errors naming the key and the file.
void load_config_file(const std::string& path, ServerConfig& into);

// The engine's options from a server config (mode resolved, batch, window and slots defaulted).
EngineOptions engine_options(const ServerConfig& c);
// EngineOptions::initial_threads from threads.torch: the same count when set to other than its
// default 1, else 0 (every core). Never throws, unlike engine_options().
int initial_threads_setting(const ServerConfig& c);

std::string default_cache_dir();

}  // namespace exspec::http
