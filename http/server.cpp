#include "http/server.h"

#include "http/server_lifecycle.h"

namespace exspec::http {

int serve(const Settings& cfg) {
  ServerLifecycle life(cfg);
  if (!life.open()) return 1;
  life.run();
  return life.stop();
}

}  // namespace exspec::http
