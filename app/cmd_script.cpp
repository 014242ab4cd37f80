// exspec script FILE: the exspec commands of FILE, one a line, run in this one process. Each
// `exspec` process first spends about a second loading libtorch and its ~290 libraries (docs/testing.md);
// a script that runs a hundred small commands, as the reference grid does, pays it once.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/dispatch.h"
#include "app/script_line.h"

namespace exspec {
namespace {

const char* const kHelp =
    "usage: exspec script FILE   (FILE - reads stdin)\n\n"
    "Runs the exspec commands in FILE, one a line, in this process, one after the other: each line\n"
    "is what follows `exspec` on a command line (generate --model m --prompt \"hi\" > out.jsonl).\n"
    "Words split as a shell splits them, with '...', \"...\" and \\ quoting; > FILE, >> FILE,\n"
    "2> FILE, 2>> FILE and (after > FILE) 2>&1 redirect that line's output; blank lines and\n"
    "lines starting with # are skipped. No variables, globs or pipes. serve and batch run in\n"
    "processes of their own.\n"
    "Every line is read before any runs (a line that cannot be read: exit 2, nothing run). Then\n"
    "every line runs, whatever the ones before it gave; each that fails is named on stderr with\n"
    "its exit status, and the script exits 1 if any failed, else 0.\n";

struct NumberedLine {
  size_t number;
  ScriptLine line;
};

std::vector<NumberedLine> read_script(std::istream& in, const std::string& name) {
  std::vector<NumberedLine> lines;
  std::string text;
  for (size_t number = 1; std::getline(in, text); ++number) {
    try {
      ScriptLine line = parse_script_line(text);
      if (!line.words.empty() || line.out || line.err) lines.push_back({number, std::move(line)});
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(name + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  return lines;
}

void flush_all() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
}

// File descriptor `fd` (1 or 2) writes to the redirection's file while this lives.
class Redirected {
 public:
  Redirected(int fd, const std::optional<ScriptRedirect>& to) : fd_(fd) {
    if (!to) return;
    const int file = ::open(to->path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (to->append ? O_APPEND : O_TRUNC), 0644);
    if (file < 0) throw std::runtime_error("cannot open " + to->path + ": " + std::strerror(errno));
    flush_all();
    saved_ = ::dup(fd);
    ::dup2(file, fd);
    ::close(file);
  }
  // `fd` writes where `to_fd` writes (2>&1).
  Redirected(int fd, int to_fd) : fd_(fd) {
    flush_all();
    saved_ = ::dup(fd);
    ::dup2(to_fd, fd);
  }
  ~Redirected() {
    if (saved_ < 0) return;
    flush_all();
    ::dup2(saved_, fd_);
    ::close(saved_);
  }
  Redirected(const Redirected&) = delete;
  Redirected& operator=(const Redirected&) = delete;

 private:
  int fd_;
  int saved_ = -1;
};

// One line as `exspec WORDS...`, its streams redirected; the streams' formats and states are
// put back after it, so that no line's output depends on the lines before it.
int run_line(const ScriptLine& line) {
  std::vector<std::string> words{"exspec"};
  words.insert(words.end(), line.words.begin(), line.words.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::ios out_format(nullptr), err_format(nullptr);
  out_format.copyfmt(std::cout);
  err_format.copyfmt(std::cerr);
  int status;
  {
    const Redirected out(1, line.out);
    const Redirected err = line.err_to_out ? Redirected(2, 1) : Redirected(2, line.err);
    status = line.words.empty() ? 0 : run_exspec(static_cast<int>(words.size()), argv.data(), /*in_script=*/true);
  }
  std::cout.copyfmt(out_format);
  std::cerr.copyfmt(err_format);
  std::cout.clear();
  std::cerr.clear();
  return status;
}

}  // namespace

int cmd_script(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {  // --help anywhere, as every subcommand takes it
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::cout << kHelp;
      return 0;
    }
  }
  if (argc - first != 1) {
    std::cerr << kHelp;
    return 2;
  }
  const std::string name = argv[first];
  std::vector<NumberedLine> lines;
  try {
    std::ifstream file;
    if (name != "-") {
      file.open(name);
      if (!file) throw std::invalid_argument("cannot read " + name);
    }
    lines = read_script(name == "-" ? std::cin : file, name);
  } catch (const std::invalid_argument& e) {
    std::cerr << "exspec script: " << e.what() << "\n";
    return 2;
  }
  size_t failed = 0;
  for (const NumberedLine& l : lines) {
    int status;
    try {
      status = run_line(l.line);
    } catch (const std::exception& e) {  // a redirection's file that cannot be opened
      std::cerr << "exspec script: " << name << ":" << l.number << ": " << e.what() << "\n";
      status = 1;
    }
    if (status == 0) continue;
    ++failed;
    std::cerr << "exspec script: " << name << ":" << l.number << ": " << (l.line.words.empty() ? "" : l.line.words[0])
              << " exited " << status << "\n";
  }
  if (failed) std::cerr << "exspec script: " << failed << " of " << lines.size() << " lines failed\n";
  return failed ? 1 : 0;
}

}  // namespace exspec
