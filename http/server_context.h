// What every connection shares: the configuration, the loaded models (once ready), the state
// and the metrics. Internal to http/.
#pragma once
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "actors/engine.h"
#include "chat/chat_template.h"
#include "http/engine_keeper.h"
#include "http/generation.h"
#include "grammar/grammar_service.h"
#include "http/metrics.h"
#include "http/openai_request.h"
#include "config/settings.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec::jobs {
class JobStore;
class BatchRunner;
}  // namespace exspec::jobs

namespace exspec::http {

class RequestWork;

struct Backend {
  std::unique_ptr<Engine> engine;
  std::optional<Tokenizer> tokenizer;
  std::optional<chat::ChatTemplate> chat;
  std::unique_ptr<grammar::GrammarService> grammars;  // structured output; null without tokenizer.json
  ModelFacts facts;  // points into tokenizer / chat / grammars
  std::string served_name, mode;
  std::string draft_tokens = "0";  // "auto" or K
};

enum class ServerState { Loading, Ready, Draining, Failed };

struct ServerContext {
  Settings cfg;
  std::atomic<ServerState> state{ServerState::Loading};
  std::atomic<Backend*> backend{nullptr};  // set once, when ready
  std::atomic<bool> engine_stopping{false};
  std::atomic<int64_t> inflight{0};        // generation requests being served
  std::atomic<int64_t> connections{0};
  Metrics metrics;
  jobs::JobStore* jobs = nullptr;        // Files/Batches state; null without a data directory
  jobs::BatchRunner* batches = nullptr;  // runs the batches in `jobs`
  RequestWork* work = nullptr;  // the low-priority pool for costly request work (http/request_work.h)
  EngineKeeper keeper;  // every engine->stats() / shutdown() runs on its thread
  int64_t started_unix = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
};

// What a Generation needs from the server: the same for an endpoint request (priority 1) and a
// batch line (priority 0); only where its events are posted differs.
inline GenerationEnv generation_env(ServerContext& ctx, Backend& b,
                                    std::function<void(std::function<void()>)> post, int priority) {
  GenerationEnv env;
  env.engine = b.engine.get();
  env.tokenizer = b.tokenizer ? &*b.tokenizer : nullptr;
  env.metrics = &ctx.metrics;
  env.model_name = b.served_name;
  env.model_eos = b.engine->info().eos_ids;
  env.engine_stopping = &ctx.engine_stopping;
  env.post = std::move(post);
  env.priority = priority;
  return env;
}

}  // namespace exspec::http
