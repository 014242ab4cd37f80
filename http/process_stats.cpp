#include "http/process_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace exspec::http {
namespace {

// /proc/stat's boot time, in seconds since the epoch (process start times count from it).
double boot_time() {
  std::ifstream f("/proc/stat");
  std::string key;
  double btime = 0;
  while (f >> key) {
    if (key == "btime") {
      f >> btime;
      break;
    }
    f.ignore(1 << 20, '\n');
  }
  return btime;
}

}  // namespace

ProcessStats read_process_stats() {
  ProcessStats p;
  std::ifstream f("/proc/self/stat");
  std::string line;
  if (!std::getline(f, line)) return p;
  // Fields after the command name, which is in parentheses and may hold spaces: state is field 3.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return p;
  std::istringstream rest(line.substr(close + 2));
  std::vector<std::string> field(3);  // field[i] is field i of proc(5), from 3 on
  for (std::string s; rest >> s;) field.push_back(s);
  if (field.size() <= 24) return p;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  p.cpu_seconds = (std::stod(field[14]) + std::stod(field[15])) / tick;  // utime, stime
  p.start_time_seconds = boot_time() + std::stod(field[22]) / tick;      // starttime
  p.virtual_bytes = std::stoll(field[23]);                                // vsize
  p.resident_bytes = static_cast<int64_t>(std::stod(field[24]) * page);  // rss, in pages
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++p.open_fds;
  if (p.open_fds > 0) --p.open_fds;  // the descriptor that lists the directory
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0) p.max_fds = static_cast<int64_t>(lim.rlim_cur);
  p.known = true;
  return p;
}

}  // namespace exspec::http
