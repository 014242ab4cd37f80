#include "http/server_config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace exspec::http {
namespace {

using nlohmann::json;

struct Reader {
  const std::string& file;
  std::string where(const std::string& key) const { return file + ": \"" + key + "\""; }

  template <class T>
  void get(const json& obj, const std::string& key, const std::string& full, T& out) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return;
    const json& v = *it;
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) throw std::invalid_argument(where(full) + " must be true or false");
      out = v.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) throw std::invalid_argument(where(full) + " must be a string");
      out = v.get<std::string>();
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) throw std::invalid_argument(where(full) + " must be a number");
      out = v.get<T>();
    } else {
      if (!v.is_number_integer()) throw std::invalid_argument(where(full) + " must be an integer");
      const int64_t n = v.get<int64_t>();
      if (n < 0) throw std::invalid_argument(where(full) + " must be >= 0");
      out = static_cast<T>(n);
    }
  }

  void known(const json& obj, const std::string& prefix, std::initializer_list<const char*> keys) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool ok = false;
      for (const char* k : keys) ok = ok || it.key() == k;
      if (!ok) throw std::invalid_argument(file + ": unknown key \"" + prefix + it.key() + "\" (see config/README.md)");
    }
  }
};

}  // namespace

void load_config_file(const std::string& path, ServerConfig& c) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read config file " + path);
  json j;
  try {
    j = json::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument(path + ": the top level must be a JSON object");
  Reader r{path};
  r.known(j, "", {"host", "port", "model", "draft", "served_model_name", "cache_dir", "data_dir", "job_store", "replica",
                  "batch_lease_ms", "api_key", "chat_template", "tool_call_parser", "split_special_tokens",
                  "dtype", "device", "engine", "threads", "limits"});
  r.get(j, "host", "host", c.host);
  r.get(j, "port", "port", c.port);
  r.get(j, "model", "model", c.model);
  r.get(j, "draft", "draft", c.draft);
  r.get(j, "served_model_name", "served_model_name", c.served_model_name);
  r.get(j, "cache_dir", "cache_dir", c.cache_dir);
  r.get(j, "data_dir", "data_dir", c.data_dir);
  r.get(j, "job_store", "job_store", c.job_store);
  r.get(j, "replica", "replica", c.replica);
  r.get(j, "batch_lease_ms", "batch_lease_ms", c.batch_lease_ms);
  r.get(j, "api_key", "api_key", c.api_key);
  r.get(j, "chat_template", "chat_template", c.chat_template);
  r.get(j, "tool_call_parser", "tool_call_parser", c.tool_call_parser);
  r.get(j, "split_special_tokens", "split_special_tokens", c.split_special_tokens);
  r.get(j, "dtype", "dtype", c.dtype);
  r.get(j, "device", "device", c.device);
  if (j.contains("engine")) {
    const json& e = j["engine"];
    if (!e.is_object()) throw std::invalid_argument(r.where("engine") + " must be an object");
    r.known(e, "engine.", {"mode", "speculate", "draft_tokens", "min_draft_tokens", "max_draft_tokens", "batch", "window", "slots",
                           "min_group_fill", "max_wait", "sort_by_length", "overlap", "max_queue", "context",
                           "prefill_chunk", "prefix_cache", "slot_moves", "kv_cache_memory", "block_size"});
    r.get(e, "mode", "engine.mode", c.mode);
    r.get(e, "speculate", "engine.speculate", c.speculate);
    if (e.contains("draft_tokens")) {
      const json& k = e["draft_tokens"];
      if (k.is_number_integer()) c.draft_tokens = std::to_string(k.get<int64_t>());
      else if (k.is_string()) c.draft_tokens = k.get<std::string>();
      else throw std::invalid_argument(r.where("engine.draft_tokens") + " must be \"auto\" or an integer");
    }
    r.get(e, "min_draft_tokens", "engine.min_draft_tokens", c.min_draft_tokens);
    r.get(e, "max_draft_tokens", "engine.max_draft_tokens", c.max_draft_tokens);
    r.get(e, "batch", "engine.batch", c.batch);
    r.get(e, "window", "engine.window", c.window);
    r.get(e, "slots", "engine.slots", c.slots);
    r.get(e, "min_group_fill", "engine.min_group_fill", c.min_group_fill);
    r.get(e, "max_wait", "engine.max_wait", c.max_wait);
    r.get(e, "context", "engine.context", c.context);
    r.get(e, "prefill_chunk", "engine.prefill_chunk", c.prefill_chunk);
    r.get(e, "prefix_cache", "engine.prefix_cache", c.prefix_cache);
    r.get(e, "slot_moves", "engine.slot_moves", c.slot_moves);
    r.get(e, "kv_cache_memory", "engine.kv_cache_memory", c.kv_cache_memory);
    r.get(e, "block_size", "engine.block_size", c.block_size);
    r.get(e, "sort_by_length", "engine.sort_by_length", c.sort_by_length);
    r.get(e, "overlap", "engine.overlap", c.overlap);
    r.get(e, "max_queue", "engine.max_queue", c.max_queue);
  }
  if (j.contains("threads")) {
    const json& t = j["threads"];
    if (!t.is_object()) throw std::invalid_argument(r.where("threads") + " must be an object");
    r.known(t, "threads.", {"http", "scheduler", "torch", "blas"});
    r.get(t, "http", "threads.http", c.http_threads);
    r.get(t, "scheduler", "threads.scheduler", c.scheduler_threads);
    r.get(t, "torch", "threads.torch", c.torch_threads);
    r.get(t, "blas", "threads.blas", c.blas_threads);
  }
  if (j.contains("limits")) {
    const json& l = j["limits"];
    if (!l.is_object()) throw std::invalid_argument(r.where("limits") + " must be an object");
    r.known(l, "limits.", {"max_body_bytes", "max_prompt_tokens", "max_tokens", "default_max_tokens", "max_prompts",
                           "max_stop", "max_messages", "idle_timeout_s", "shutdown_timeout_s", "max_file_bytes", "max_batch_lines",
                           "max_active_batches", "batch_in_flight", "max_connections",
                           "batch_window_s"});
    Limits& L = c.limits;
    r.get(l, "max_body_bytes", "limits.max_body_bytes", L.max_body_bytes);
    r.get(l, "max_prompt_tokens", "limits.max_prompt_tokens", L.max_prompt_tokens);
    r.get(l, "max_tokens", "limits.max_tokens", L.max_tokens);
    r.get(l, "default_max_tokens", "limits.default_max_tokens", L.default_max_tokens);
    r.get(l, "max_prompts", "limits.max_prompts", L.max_prompts);
    r.get(l, "max_stop", "limits.max_stop", L.max_stop);
    r.get(l, "max_messages", "limits.max_messages", L.max_messages);
    r.get(l, "idle_timeout_s", "limits.idle_timeout_s", L.idle_timeout_s);
    r.get(l, "shutdown_timeout_s", "limits.shutdown_timeout_s", L.shutdown_timeout_s);
    r.get(l, "max_file_bytes", "limits.max_file_bytes", L.max_file_bytes);
    r.get(l, "max_batch_lines", "limits.max_batch_lines", L.max_batch_lines);
    r.get(l, "max_active_batches", "limits.max_active_batches", L.max_active_batches);
    r.get(l, "batch_in_flight", "limits.batch_in_flight", L.batch_in_flight);
    r.get(l, "max_connections", "limits.max_connections", L.max_connections);
    r.get(l, "batch_window_s", "limits.batch_window_s", L.batch_window_s);
    if (L.batch_window_s < 1) throw std::invalid_argument(r.where("limits.batch_window_s") + " must be at least 1");
  }
}

namespace {

// MemAvailable of /proc/meminfo in bytes (0 when it cannot be read: then no budget).
int64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

}  // namespace

int initial_threads_setting(const ServerConfig& c) { return c.torch_threads != 1 ? c.torch_threads : 0; }

EngineOptions engine_options(const ServerConfig& c) {
  EngineOptions o;
  o.model_dir = c.model;
  o.dtype = c.dtype;
  o.device = c.device;
  o.overlap = c.overlap;
  o.max_queue = c.max_queue;
  o.scheduler_threads = c.scheduler_threads;
  o.torch_threads = c.torch_threads;
  o.initial_threads = initial_threads_setting(c);
  o.blas_threads = c.blas_threads;
  EngineConfig& d = o.decoding;
  if (!c.mode.empty()) d.mode = parse_mode(c.mode);
  d.speculate = parse_speculate(c.speculate);
  if (d.mode != Mode::NonSpec) o.draft_dir = c.draft;  // Engine::start sets d.draft from it
  parse_draft_tokens(c.draft_tokens, d);
  d.min_draft_tokens = c.min_draft_tokens;
  d.max_draft_tokens = c.max_draft_tokens;
  // In place a step takes every ready slot (one forward for all of them, which is cheaper than
  // two of half the rows each): its batch is the slots unless set.
  if (c.batch < 0 || c.window < 0 || c.slots < 0)
    throw std::invalid_argument("engine.batch, engine.window and engine.slots must be >= 0 (0: the default)");
  if (d.mode == Mode::InPlace && c.window > 0)
    throw std::invalid_argument("engine.window (--window) is exspec's window; in place the KV slots are engine.slots (--slots)");
  const int64_t batch = c.batch > 0 ? c.batch : kPaperBatch;
  d.window = c.window > 0 ? c.window : 2 * batch;
  d.slots = c.slots > 0 ? c.slots : 2 * batch;
  d.batch_size = c.batch > 0 ? c.batch : d.mode == Mode::InPlace ? d.slots : kPaperBatch;
  d.min_group_fill = c.min_group_fill;
  d.max_wait = c.max_wait;
  d.context = c.context;
  d.prefill_chunk = c.prefill_chunk;
  d.prefix_cache = c.prefix_cache;
  d.slot_moves = c.slot_moves;
  d.block_size = c.block_size;
  d.kv_cache_bytes = c.kv_cache_memory == "auto" ? available_memory() / 2 : parse_bytes(c.kv_cache_memory);
  d.sort_by_length = c.sort_by_length;
  return o;
}

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/exspec";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/exspec";
  return "/tmp/exspec-cache";
}

}  // namespace exspec::http
