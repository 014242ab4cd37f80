#include "app/engine_flags.h"

namespace exspec {

const std::set<std::string>& engine_flag_names() {
  static const std::set<std::string> names{"config", "model", "draft", "mode", "speculate", "kv-cache-memory", "draft-tokens", "min-draft-tokens", "max-draft-tokens", "batch", "window", "slots",
                                           "min-group-fill", "max-wait", "context", "prefill-chunk", "dtype", "device", "served-model-name",
                                           "chat-template", "tool-call-parser", "cache-dir", "threads", "torch-threads", "max-queue", "block-size"};
  return names;
}

const std::set<std::string>& engine_switch_names() {
  static const std::set<std::string> names{"help", "no-overlap", "sort-by-length", "no-prefix-cache", "no-slot-moves", "split-special-tokens"};
  return names;
}

void apply_engine_flags(const Args& a, http::ServerConfig& c) {
  if (a.has("config")) http::load_config_file(a.get("config", ""), c);
  c.model = a.get("model", c.model);
  c.draft = a.get("draft", c.draft);
  c.mode = a.get("mode", c.mode);
  c.speculate = a.get("speculate", c.speculate);
  c.kv_cache_memory = a.get("kv-cache-memory", c.kv_cache_memory);
  c.draft_tokens = a.get("draft-tokens", c.draft_tokens);
  c.min_draft_tokens = a.get_int("min-draft-tokens", c.min_draft_tokens);
  c.max_draft_tokens = a.get_int("max-draft-tokens", c.max_draft_tokens);
  c.batch = a.get_int("batch", c.batch);
  c.window = a.get_int("window", c.window);
  c.slots = a.get_int("slots", c.slots);
  if (a.has("min-group-fill")) c.min_group_fill = std::stod(a.get("min-group-fill", ""));
  c.max_wait = a.get_int("max-wait", c.max_wait);
  c.context = a.get_int("context", c.context);
  c.prefill_chunk = a.get_int("prefill-chunk", c.prefill_chunk);
  c.block_size = a.get_int("block-size", c.block_size);
  if (a.has("sort-by-length")) c.sort_by_length = true;
  if (a.has("no-overlap")) c.overlap = false;
  if (a.has("no-prefix-cache")) c.prefix_cache = false;
  if (a.has("no-slot-moves")) c.slot_moves = false;
  c.dtype = a.get("dtype", c.dtype);
  c.device = a.get("device", c.device);
  c.served_model_name = a.get("served-model-name", c.served_model_name);
  c.chat_template = a.get("chat-template", c.chat_template);
  c.tool_call_parser = a.get("tool-call-parser", c.tool_call_parser);
  if (a.has("split-special-tokens")) c.split_special_tokens = true;
  c.cache_dir = a.get("cache-dir", c.cache_dir);
  c.blas_threads = static_cast<int>(a.get_int("threads", c.blas_threads));
  c.torch_threads = static_cast<int>(a.get_int("torch-threads", c.torch_threads));
  c.max_queue = static_cast<size_t>(a.get_int("max-queue", static_cast<int64_t>(c.max_queue)));
}

}  // namespace exspec
