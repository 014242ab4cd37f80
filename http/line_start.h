// One batch line started as its endpoint would run it: the same for the server's batch runner
// and for `exspec batch`.
#pragma once
#include <memory>
#include <optional>

#include "http/api_error.h"
#include "jobs/batch_lines.h"
#include "http/generation.h"

namespace exspec::http {

struct LineStart {
  std::shared_ptr<Generation> gen;  // started: it answers through the output it was given
  std::optional<ApiError> refused;  // not started: what the endpoint would have answered
  bool busy = false;                // not started: the engine is full or stopping (429/503), retry later
};

// chat: the line is a /v1/chat/completions request (else /v1/completions).
LineStart start_line(const BatchLine& line, bool chat, const ModelFacts& facts, GenerationEnv env,
                     std::shared_ptr<GenerationOutput> out);

}  // namespace exspec::http
