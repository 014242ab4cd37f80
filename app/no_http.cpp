// `serve` and `batch` in a build configured with -DEXSPEC_WITH_HTTP=OFF (a GPU host without
// Boost): the commands stay listed, so a user learns why they do not run rather than "unknown".
#include <iostream>

#include "app/cmd_serve.h"
#include "app/commands.h"

namespace exspec {
namespace {

int no_http(const char* command) {
  std::cerr << "exspec " << command
            << ": this build has no HTTP layer (configured with -DEXSPEC_WITH_HTTP=OFF); "
               "rebuild with -DEXSPEC_WITH_HTTP=ON (needs Boost 1.81 and SQLite) to use it\n";
  return 2;
}

}  // namespace

int cmd_serve(int, char**, int) { return no_http("serve"); }
int cmd_batch(int, char**, int) { return no_http("batch"); }

}  // namespace exspec
