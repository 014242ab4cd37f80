// `exspec serve`: the OpenAI-compatible HTTP server (http/).
#pragma once

namespace exspec {
// argv[first] is the first flag after "serve". Returns the exit status.
int cmd_serve(int argc, char** argv, int first);
}  // namespace exspec
