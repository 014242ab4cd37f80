// The OpenAI-compatible HTTP server: a Boost.Beast acceptor and connections on an Asio thread
// pool, in front of the engine. Torch-free.
#pragma once
#include "config/settings.h"

namespace exspec::http {

// Listens on cfg.host:cfg.port (port 0: any free port), loads the models in the background
// (GET /health says 503 "loading" until they are ready), serves until SIGINT or SIGTERM, then
// drains: no new requests (503), in-flight ones and grammar compiles finish (for at most
// limits.shutdown_timeout_s, then they are cancelled), responses are written, and it returns 0;
// a second signal ends the process at once (status 128 + the signal). Returns 1 when the port
// cannot be bound or the models cannot be loaded (the reason on stderr).
int serve(const Settings& cfg);

}  // namespace exspec::http
