#include "app/cmd_serve.h"

#include <iostream>

#include "app/command_line.h"
#include "app/demo_pair.h"
#include "http/server.h"

namespace exspec {
namespace {

// What --help says before the flags.
const char* const kUsage = "[--config FILE] [--model DIR] [--draft DIR] [flags]";
const char* const kAbout =
    "OpenAI-compatible HTTP server: POST /v1/completions, POST /v1/chat/completions, GET /v1/models,\n"
    "GET /health, GET /metrics, POST /tokenize, POST /detokenize, and with --data-dir or --job-store\n"
    "/v1/files and /v1/batches. Settings come from the config file (config/exspec.json holds every\n"
    "key at its default, config/README.md says what each does); flags override it. Without a model\n"
    "it serves the trained demo pair in demo/ (demo/README.md; EXSPEC_DEMO_DIR overrides where).\n"
    "The mode is inplace unless --mode says otherwise: continuous batching, and without --draft every\n"
    "step is plain (K = 0), or, with --speculate ngram, drafts by prompt lookup. A request's\n"
    "\"prediction\" is verified in any case. SIGINT/SIGTERM drain and exit.\n"
    "See docs/serving.md (the API, errors, metrics).\n";

}  // namespace

int cmd_serve(int argc, char** argv, int first) {
  const auto cl = read_command_line(Command::Serve, argc, argv, first, kUsage, kAbout);
  if (!cl) return 0;
  Settings c = cl->settings();
  if (c.model.empty()) {
    if (!c.draft.empty()) throw std::invalid_argument("--draft needs --model");
    use_demo_pair(c, "serve");
    if (c.speculate == "ngram") c.draft.clear();  // the demo target alone: lookup needs no draft
  }
  return http::serve(c);
}

}  // namespace exspec
