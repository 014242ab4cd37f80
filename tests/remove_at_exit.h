// A test process's scratch directory, removed when the process exits (its static objects are
// destroyed). Forked children leave with _exit, so none of them removes it under the parent.
#pragma once
#include <filesystem>
#include <string>
#include <system_error>

namespace exspec::test {

struct RemoveAtExit {
  std::string dir;  // set once the directory exists; empty: nothing to remove
  ~RemoveAtExit() {
    std::error_code ec;  // at exit nothing may throw; what cannot be removed stays
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace exspec::test
