// The option table: every flag of exspec serve, batch and generate and every key of the config
// file, one row each. Parsing (app/command_line.h), the config file's reading, the defaults
// (Settings(command), config/exspec.json) and the --help text all come from it; the tests check
// config/exspec.json, config/README.md and the docs' flag lists against it. Torch-free.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/settings.h"

namespace exspec {

constexpr unsigned operator|(Command a, Command b) { return static_cast<unsigned>(a) | static_cast<unsigned>(b); }
constexpr unsigned operator|(unsigned a, Command b) { return a | static_cast<unsigned>(b); }

// Bool: a switch on the command line (it turns the setting away from its default: --no-overlap
// sets overlap false), true/false in the file. IntOrText: a string, or an integer the file may
// write bare (draft_tokens: "auto" or K). List: a repeatable flag (--prompt).
enum class Type { Bool, Int, Real, Text, IntOrText, List };

using Value = std::variant<bool, int64_t, double, std::string>;

struct Option {
  std::string flag;       // --flag without the dashes; empty: the config file only
  std::string key;        // "engine.batch" in the config file; empty: the command line only
  Type type = Type::Text;
  std::string metavar;    // what --help shows after the flag: "N", "DIR"
  unsigned commands = 0;  // the commands whose command line takes the flag (Command bits)
  unsigned required = 0;  // ... and those that need it given
  Value dflt;             // the default: serve's, batch's and the config file's (engine rows: the engine's)
  std::optional<Value> generate_dflt;  // generate's, where it differs
  int64_t min = 0, max = std::numeric_limits<int64_t>::max();  // Int
  double real_min = -std::numeric_limits<double>::infinity(), real_max = std::numeric_limits<double>::infinity();
  std::string help;
  // Where the value lands in Settings; empty for what a command reads itself (--prompt).
  std::function<void(Settings&, const Value&)> set;
  std::function<Value(const Settings&)> get;

  bool takes(Command c) const { return (commands & static_cast<unsigned>(c)) != 0; }
  bool needs(Command c) const { return (required & static_cast<unsigned>(c)) != 0; }
  const Value& default_for(Command c) const { return c == Command::Generate && generate_dflt ? *generate_dflt : dflt; }

  // The row builders the table is written with (config/options.cpp).
  Option in(unsigned command_bits) const;
  Option need(Command c) const;
  Option for_generate(Value v) const;
  Option range(int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max()) const;
  Option real_range(double lo, double hi) const;
  template <class T>
  Option to(T Settings::*member) const;
  template <class T>
  Option to(T Limits::*member) const;
  // Rows of the engine's options write straight into Settings::engine, and their default is the
  // engine's own (the member's initial value): the row gives none.
  template <class T>
  Option to(T EngineOptions::*member) const;
  template <class T>
  Option to(T EngineConfig::*member) const;
};

const std::vector<Option>& option_table();

// The row of --flag for a command, or of a config-file key; null when there is none.
const Option* find_flag(Command c, const std::string& flag);
const Option* find_key(const std::string& key);

// A value from the command line's text or the file's JSON, type- and range-checked; `where` names
// it in the error ("--port", "exspec.json: \"port\"").
Value value_from_text(const Option& o, const std::string& text, const std::string& where);
Value value_from_json(const Option& o, const nlohmann::json& v, const std::string& where);
// How the file writes a value (strings quoted), and --help.
nlohmann::json value_json(const Value& v);
std::string value_text(const Value& v);

// The config file with every key at its default: what config/exspec.json holds.
nlohmann::ordered_json default_config();

}  // namespace exspec
