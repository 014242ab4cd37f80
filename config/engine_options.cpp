#include "config/engine_options.h"

#include <fstream>
#include <stdexcept>

namespace exspec {
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

// "auto" or a count of candidates (0: off).
int64_t parse_draft_screen(const std::string& v) {
  if (v.empty() || v == "auto") return kScreenAuto;
  const int64_t n = parse_count(v);
  if (n < 0)
    throw std::invalid_argument("engine.draft_screen (--draft-screen) must be auto or a number of candidates >= 0 (0: off), not '" + v + "'");
  return n;
}

}  // namespace

int initial_threads_setting(const Settings& c) { return c.engine.torch_threads != 1 ? c.engine.torch_threads : 0; }

EngineOptions engine_options(const Settings& c) {
  EngineOptions o = c.engine;  // what the option table wrote straight in
  o.model_dir = c.model;
  o.initial_threads = initial_threads_setting(c);
  EngineConfig& d = o.decoding;
  if (!c.mode.empty()) d.mode = parse_mode(c.mode);
  d.speculate = parse_speculate(c.speculate);
  if (d.mode != Mode::NonSpec) o.draft_dir = c.draft;  // Engine::start sets d.draft from it
  parse_draft_tokens(c.draft_tokens, d);
  o.draft_screen = parse_draft_screen(c.draft_screen);
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
  d.row_buckets = parse_toggle("engine.row_buckets (--row-buckets)", c.row_buckets);
  d.cuda_graphs = parse_toggle("engine.cuda_graphs (--cuda-graphs)", c.cuda_graphs);
  d.plan_ahead = parse_toggle("engine.plan_ahead (--plan-ahead)", c.plan_ahead);
  d.kv_cache_bytes = c.kv_cache_memory == "auto" ? available_memory() / 2 : parse_bytes(c.kv_cache_memory);
  return o;
}

}  // namespace exspec
