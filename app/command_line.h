// The command line of exspec serve, batch and generate, read by the option table
// (config/options.h): the flags a command takes, their values checked, --help written from the
// rows, and the Settings they make.
#pragma once
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/args.h"
#include "config/options.h"

namespace exspec {

class CommandLine {
 public:
  // argv[first..] are the flags. A flag the command does not take is an error naming it; so is a
  // value of the wrong type or out of range, and a required flag left out, unless --help is given
  // (then help() is all a caller asks).
  CommandLine(Command c, int argc, char** argv, int first);

  bool help() const { return args_.has("help"); }
  bool given(const std::string& flag) const;
  // The value given, else the command's default. The flag must be the command's, of that type.
  int64_t integer(const std::string& flag) const;
  double real(const std::string& flag) const;
  std::string text(const std::string& flag) const;
  std::vector<std::string> all(const std::string& flag) const;  // a repeatable flag, in order

  // The command's defaults, the --config file over them (serve, batch), the flags over that.
  Settings settings() const;

 private:
  const Option& row(const std::string& flag) const;  // std::logic_error if the command lacks it
  Value value(const std::string& flag, Type type) const;

  Command command_;
  Args args_;
  std::map<std::string, Value> values_;  // by flag, the last one given
};

// The --help of a command: its usage line and what it does (`about`), then one line per flag
// and, for the commands that read the config file, the keys that have no flag.
void print_help(std::ostream& out, Command c, const std::string& usage, const std::string& about);

// What a command starts with: its command line, or nothing once --help has been printed on
// stdout (the command then exits 0).
std::optional<CommandLine> read_command_line(Command c, int argc, char** argv, int first, const std::string& usage,
                                             const std::string& about);

}  // namespace exspec
