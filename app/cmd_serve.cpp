#include "app/cmd_serve.h"

#include <iostream>

#include "app/args.h"
#include "app/engine_flags.h"
#include "http/server.h"
#include "app/demo_pair.h"

namespace exspec {

int cmd_serve(int argc, char** argv, int first) {
  std::set<std::string> flags = engine_flag_names();
  flags.insert({"host", "port", "api-key", "data-dir", "job-store", "replica", "batch-lease-ms", "http-threads", "max-body-bytes", "max-tokens",
                "max-connections"});
  Args a(argc, argv, first, flags, engine_switch_names());
  if (a.has("help")) {
    std::cout
        << "exspec serve [--config FILE] [--model DIR] [--draft DIR] [--host H] [--port P]\n"
           "             [--mode inplace|exspec|eqspec|nonspec] [--speculate model|ngram]\n"
           "             [--draft-tokens auto|K] [--min-draft-tokens N]\n"
           "             [--max-draft-tokens N] [--batch B] [--slots N] [--window W] [--context N] [--prefill-chunk N]\n"
           "             [--no-prefix-cache] [--no-slot-moves] [--kv-cache-memory SIZE|auto|0] [--block-size N]\n"
           "             [--min-group-fill F] [--max-wait STEPS] [--sort-by-length] [--no-overlap]\n"
           "             [--dtype float32|float64|bfloat16|float16|int8] [--device cpu|cuda]\n"
           "             [--api-key KEY] [--served-model-name NAME] [--chat-template auto|chatml|llama2|mistral|\n"
           "             vicuna|llama3|llama3.1|glm4] [--cache-dir DIR] [--threads N] [--torch-threads N]\n"
           "             [--http-threads N] [--max-queue N] [--max-body-bytes N] [--max-tokens N]\n"
           "             [--max-connections N]  (0: the file limit less 64; beyond: 503 at once)\n"
           "             [--data-dir DIR]  (turns on /v1/files and /v1/batches, kept in DIR)\n"
           "             [--job-store postgresql://...]  (instead: kept in PostgreSQL, shared by replicas)\n"
           "             [--replica NAME] [--batch-lease-ms N]  (a replica label on /metrics; batch line lease)\n"
           "OpenAI-compatible HTTP server: POST /v1/completions, POST /v1/chat/completions, GET /v1/models,\n"
           "GET /health, GET /metrics. Settings come from the config file (config/exspec.json documents\n"
           "the defaults; config/README.md every key), flags override it. Listens on 127.0.0.1:8000 by\n"
           "default (--port 0: any free port, printed on stderr). Without a model it serves the trained\n"
           "demo pair in demo/ (demo/README.md; EXSPEC_DEMO_DIR overrides where). The mode is inplace unless --mode says\n"
           "otherwise: continuous batching, and without --draft every step is plain (K = 0), or, with\n"
           "--speculate ngram, drafts by prompt lookup. A request's \"prediction\" is verified in any case.\n"
           "SIGINT/SIGTERM drain and exit.\n"
           "See docs/serving.md (the API, errors, metrics) and config/README.md (every key).\n";
    return 0;
  }
  http::ServerConfig c;
  apply_engine_flags(a, c);
  c.host = a.get("host", c.host);
  c.port = static_cast<int>(a.get_int("port", c.port));
  c.api_key = a.get("api-key", c.api_key);
  c.data_dir = a.get("data-dir", c.data_dir);
  c.job_store = a.get("job-store", c.job_store);
  c.replica = a.get("replica", c.replica);
  c.batch_lease_ms = a.get_int("batch-lease-ms", c.batch_lease_ms);
  if (c.batch_lease_ms < 100) throw std::invalid_argument("--batch-lease-ms must be >= 100");
  c.http_threads = static_cast<int>(a.get_int("http-threads", c.http_threads));
  c.limits.max_body_bytes =
      static_cast<size_t>(a.get_int("max-body-bytes", static_cast<int64_t>(c.limits.max_body_bytes)));
  c.limits.max_tokens = a.get_int("max-tokens", c.limits.max_tokens);
  const int64_t max_connections = a.get_int("max-connections", static_cast<int64_t>(c.limits.max_connections));
  if (max_connections < 0) throw std::invalid_argument("--max-connections must be >= 0");
  c.limits.max_connections = static_cast<size_t>(max_connections);
  if (c.port < 0 || c.port > 65535) throw std::invalid_argument("--port must be in 0..65535");
  if (c.model.empty()) {
    if (!c.draft.empty()) throw std::invalid_argument("--draft needs --model");
    use_demo_pair(c, "serve");
    if (c.speculate == "ngram") c.draft.clear();  // the demo target alone: lookup needs no draft
  }
  return http::serve(c);
}

}  // namespace exspec
