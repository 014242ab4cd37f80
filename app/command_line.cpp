#include "app/command_line.h"

#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace exspec {
namespace {

bool reads_config_file(Command c) { return find_flag(c, "config") != nullptr; }

// "  --flag VALUE    text..." with the text wrapped at 100 columns under its first line.
void entry(std::ostream& out, const std::string& left, const std::string& text) {
  constexpr size_t indent = 32, width = 100;
  std::string line = "  " + left;
  if (line.size() + 2 > indent) {  // at least one space before the text
    out << line << "\n";
    line.clear();
  }
  line.resize(indent, ' ');
  std::istringstream words(text);
  bool first = true;
  for (std::string w; words >> w; first = false) {
    if (!first && line.size() + 1 + w.size() > width) {
      out << line << "\n";
      line = std::string(indent, ' ');
      first = true;
    }
    line += (first ? "" : " ") + w;
  }
  out << line << "\n";
}

std::string described(const Option& o, Command c, bool file) {
  std::string s = o.help;
  const Value& d = o.default_for(c);
  if (o.needs(c)) s += " (required)";
  else if (o.type != Type::Bool && o.type != Type::List && value_text(d) != "") s += " (default " + value_text(d) + ")";
  if (file && !o.key.empty())
    s += " [" + o.key + (o.type == Type::Bool ? ": " + value_text(!std::get<bool>(d)) : "") + "]";
  return s;
}

}  // namespace

CommandLine::CommandLine(Command c, int argc, char** argv, int first)
    : command_(c),
      args_([&] {
        std::set<std::string> valued, switches;
        for (const Option& o : option_table())
          if (o.takes(c)) (o.type == Type::Bool ? switches : valued).insert(o.flag);
        return Args(argc, argv, first, valued, switches);
      }()) {
  if (help()) return;
  for (const Option& o : option_table()) {
    if (!o.takes(c)) continue;
    if (o.needs(c) && !args_.has(o.flag)) throw std::invalid_argument("missing --" + o.flag);
    if (args_.has(o.flag) && o.type != Type::List) values_[o.flag] = value_from_text(o, args_.get(o.flag, ""), "--" + o.flag);
  }
}

bool CommandLine::given(const std::string& flag) const { return args_.has(row(flag).flag); }

const Option& CommandLine::row(const std::string& flag) const {
  const Option* o = find_flag(command_, flag);
  if (!o) throw std::logic_error(std::string("exspec ") + command_name(command_) + " has no flag --" + flag);
  return *o;
}

Value CommandLine::value(const std::string& flag, Type type) const {
  const Option& o = row(flag);
  if (o.type != type) throw std::logic_error("--" + flag + " is read as another type than the option table's");
  auto it = values_.find(flag);
  return it != values_.end() ? it->second : o.default_for(command_);
}

int64_t CommandLine::integer(const std::string& flag) const { return std::get<int64_t>(value(flag, Type::Int)); }
double CommandLine::real(const std::string& flag) const { return std::get<double>(value(flag, Type::Real)); }
std::string CommandLine::text(const std::string& flag) const { return std::get<std::string>(value(flag, Type::Text)); }

std::vector<std::string> CommandLine::all(const std::string& flag) const {
  if (row(flag).type != Type::List) throw std::logic_error("--" + flag + " is not repeatable");
  return args_.all(flag);
}

Settings CommandLine::settings() const {
  Settings s(command_);
  if (reads_config_file(command_) && given("config")) load_config_file(text("config"), s);
  for (const Option& o : option_table()) {
    if (!o.set || !o.takes(command_) || !args_.has(o.flag)) continue;
    // A switch turns its setting away from the default (--no-overlap: overlap false).
    o.set(s, o.type == Type::Bool ? Value(!std::get<bool>(o.default_for(command_))) : values_.at(o.flag));
  }
  return s;
}

void print_help(std::ostream& out, Command c, const std::string& usage, const std::string& about) {
  const bool file = reads_config_file(c);
  out << "usage: exspec " << command_name(c) << " " << usage << "\n\n" << about << "\nflags"
      << (file ? " (a flag overrides the config file's key, in brackets):\n" : ":\n");
  for (bool required : {true, false})  // the required ones first, then the table's order
    for (const Option& o : option_table())
      if (o.takes(c) && o.needs(c) == required)
        entry(out, "--" + o.flag + (o.metavar.empty() ? "" : " " + o.metavar), described(o, c, file));
  if (!file) return;
  out << "\nconfig-file keys without a flag here (config/README.md says more):\n";
  for (const Option& o : option_table())
    if (!o.key.empty() && !o.takes(c)) entry(out, o.key + " " + o.metavar, described(o, c, false));
}

std::optional<CommandLine> read_command_line(Command c, int argc, char** argv, int first, const std::string& usage,
                                             const std::string& about) {
  CommandLine cl(c, argc, argv, first);
  if (!cl.help()) return cl;
  print_help(std::cout, c, usage, about);
  return std::nullopt;
}

}  // namespace exspec
