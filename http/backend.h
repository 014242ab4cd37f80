// Loading what serves requests: the engine (models, actors), the tokenizer and chat template,
// and the facts request parsing needs. `exspec serve` and `exspec batch` load the same way.
#pragma once
#include <memory>
#include <string>

#include "http/server_context.h"

namespace exspec::http {

// Throws what Engine::start throws. Warnings (no tokenizer, no chat template) go to stderr,
// prefixed with `who`.
std::unique_ptr<Backend> load_backend(const Settings& cfg, const std::string& who);

}  // namespace exspec::http
