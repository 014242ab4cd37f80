// The option table (config/options.h) and the command line over it (app/command_line.h): every
// option parses the same from a flag and from the config file, errors name the flag or key, the
// help lists every option, and config/exspec.json, config/README.md and the docs' flag lists say
// what the table says. Torch-free.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "app/command_line.h"
#include "config/engine_options.h"
#include "config/options.h"
#include "tests/remove_at_exit.h"

using namespace exspec;
using nlohmann::json;

namespace {

const Command kCommands[] = {Command::Serve, Command::Batch, Command::Generate};

std::string scratch() {
  static exspec::test::RemoveAtExit cleanup;
  static const std::string dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("exspec-options-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    cleanup.dir = d.string();
    return d.string();
  }();
  return dir;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("test setup: cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What a command's line needs besides `args`: its required flags.
CommandLine command_line(Command c, std::vector<std::string> args) {
  if (c == Command::Generate && std::find(args.begin(), args.end(), "--model") == args.end())
    args.insert(args.end(), {"--model", "m"});
  if (c == Command::Batch) args.insert(args.end(), {"--input", "in.jsonl", "--output", "out.jsonl"});
  std::vector<char*> argv{const_cast<char*>("exspec"), const_cast<char*>(command_name(c))};
  for (auto& a : args) argv.push_back(a.data());
  return CommandLine(c, static_cast<int>(argv.size()), argv.data(), 2);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// A value other than the default, inside the row's range.
Value other_value(const Option& o, Command c) {
  const Value& d = o.default_for(c);
  switch (o.type) {
    case Type::Bool: return !std::get<bool>(d);
    case Type::Int: {
      const int64_t n = std::get<int64_t>(d);
      return n < o.max ? n + 1 : n - 1;
    }
    case Type::Real: return std::get<double>(d) + 0.25;
    case Type::IntOrText: return std::string("5");
    default: return std::string("x-test");
  }
}

// A config file holding `v` at the row's key.
std::string file_with(const Option& o, const Value& v) {
  json j = value_json(v);
  std::string key = o.key;
  for (size_t dot; (dot = key.rfind('.')) != std::string::npos; key.resize(dot)) j = json{{key.substr(dot + 1), j}};
  const std::string path = scratch() + "/one.json";
  std::ofstream(path) << json{{key, j}}.dump();
  return path;
}

// The `--flag` words of the part of `text` from `from` to `to`.
std::set<std::string> flags_in(const std::string& text, const std::string& from, const std::string& to) {
  const size_t a = text.find(from);
  const size_t b = text.find(to, a == std::string::npos ? 0 : a);
  if (a == std::string::npos || b == std::string::npos)
    throw std::runtime_error("test setup: no '" + from + "' followed by '" + to + "'");
  const std::string part = text.substr(a, b - a);
  std::set<std::string> out;
  static const std::regex flag("--([a-z][a-z0-9-]*)");
  for (auto it = std::sregex_iterator(part.begin(), part.end(), flag); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  out.erase("help");  // "(`exspec serve --help`)" names the list
  return out;
}

std::set<std::string> flags_of(Command c) {
  std::set<std::string> out;
  for (const Option& o : option_table())
    if (o.takes(c) && o.flag != "help") out.insert(o.flag);
  return out;
}

}  // namespace

CATCH_TEST_CASE("option table: one row per flag of a command and per key, every key bound to a setting", "[options]") {
  std::set<std::pair<unsigned, std::string>> flags;
  std::set<std::string> keys;
  for (const Option& o : option_table()) {
    CATCH_INFO("--" << o.flag << " [" << o.key << "]");
    CATCH_CHECK_FALSE(o.help.empty());
    CATCH_CHECK((o.flag.empty() || o.commands != 0));
    CATCH_CHECK((o.key.empty() || bool(o.set)));
    CATCH_CHECK((bool(o.set) || !o.flag.empty()));
    for (Command c : kCommands)
      if (o.takes(c)) CATCH_CHECK(flags.insert({static_cast<unsigned>(c), o.flag}).second);
    if (!o.key.empty()) CATCH_CHECK(keys.insert(o.key).second);
    // A switch turns its setting away from the default: "no-" names those that default to true.
    if (o.type == Type::Bool && !o.flag.empty())
      CATCH_CHECK(std::get<bool>(o.dflt) == (o.flag.rfind("no-", 0) == 0));
  }
}

CATCH_TEST_CASE("option table: every option parses the same from its flag and from the config file", "[options]") {
  for (const Option& o : option_table()) {
    if (!o.set) continue;
    for (Command c : kCommands) {
      CATCH_INFO(command_name(c) << " --" << o.flag << " [" << o.key << "]");
      const Value v = other_value(o, c);
      Settings from_file(c);
      load_config_file(file_with(o, v), from_file);
      CATCH_CHECK(o.get(from_file) == v);
      if (!o.takes(c)) continue;
      std::vector<std::string> args{"--" + o.flag};
      if (o.type != Type::Bool) args.push_back(value_text(v));
      const Settings from_flag = command_line(c, args).settings();
      CATCH_CHECK(o.get(from_flag) == v);
      CATCH_CHECK(o.get(Settings(c)) == o.default_for(c));
    }
  }
}

CATCH_TEST_CASE("option table: serve's and generate's defaults that differ are the table's", "[options]") {
  CATCH_CHECK(Settings(Command::Serve).batch == 0);
  CATCH_CHECK(Settings(Command::Generate).batch == 1);
  CATCH_CHECK(Settings(Command::Serve).kv_cache_memory == "auto");
  CATCH_CHECK(Settings(Command::Generate).kv_cache_memory == "0");
  // --max-tokens: serve's is the limit a request may ask for, generate's the tokens per prompt.
  CATCH_CHECK(find_flag(Command::Serve, "max-tokens")->key == "limits.max_tokens");
  CATCH_CHECK(command_line(Command::Serve, {"--max-tokens", "77"}).settings().limits.max_tokens == 77);
  CATCH_CHECK(command_line(Command::Generate, {}).integer("max-tokens") == 32);
  CATCH_CHECK(command_line(Command::Generate, {"--max-tokens", "7"}).integer("max-tokens") == 7);
  CATCH_CHECK(command_line(Command::Generate, {"--max-tokens", "7"}).settings().limits.max_tokens == 4096);
  // What engine_options makes of generate's defaults: batch 1, two slots, no KV budget.
  const EngineOptions eo = engine_options(Settings(Command::Generate));
  CATCH_CHECK(eo.decoding.batch_size == 1);
  CATCH_CHECK(eo.decoding.slots == 2);
  CATCH_CHECK(eo.decoding.kv_cache_bytes == 0);
}

// One default, one place: an engine option's row writes into Settings::engine, engine_options()
// hands it on as written, and its default is the engine's own member initialiser. The keys that
// engine_options() resolves (names parsed, sizes derived, the KV budget measured) are named here.
CATCH_TEST_CASE("option table: engine rows write straight into the engine's options, with the engine's defaults", "[options]") {
  const std::set<std::string> resolved{"engine.mode",  "engine.speculate",   "engine.draft_tokens", "engine.draft_screen", "engine.batch",
                                       "engine.window", "engine.slots",      "engine.row_buckets",  "engine.cuda_graphs", "engine.plan_ahead",
                                       "engine.kv_cache_memory", "threads.http"};
  int straight = 0;
  for (const Option& o : option_table()) {
    const bool engine = o.key.rfind("engine.", 0) == 0 || o.key.rfind("threads.", 0) == 0 || o.key == "dtype" || o.key == "device";
    if (!engine || resolved.count(o.key)) continue;
    CATCH_INFO(o.key);
    Settings fresh;
    fresh.engine = EngineOptions{};
    CATCH_CHECK(o.get(fresh) == o.dflt);
    Settings s(Command::Serve);
    const Value v = o.type == Type::Text ? Value(std::string(o.key == "dtype" ? "float64" : "cuda")) : other_value(o, Command::Serve);
    o.set(s, v);
    Settings after(Command::Serve);
    after.engine = engine_options(s);
    CATCH_CHECK(o.get(after) == v);
    ++straight;
  }
  CATCH_CHECK(straight >= 17);
}

CATCH_TEST_CASE("command line: flags override the config file, which overrides the defaults", "[options]") {
  const std::string path = scratch() + "/cfg.json";
  std::ofstream(path) << R"({"engine": {"batch": 4, "overlap": false}, "limits": {"max_stop": 2}})";
  const Settings f = command_line(Command::Serve, {"--config", path}).settings();
  CATCH_CHECK(f.batch == 4);
  CATCH_CHECK_FALSE(f.engine.overlap);
  CATCH_CHECK(f.limits.max_stop == 2);
  CATCH_CHECK(f.port == 8000);
  CATCH_CHECK(command_line(Command::Batch, {"--config", path, "--batch", "6"}).settings().batch == 6);
  CATCH_CHECK(command_line(Command::Batch, {"--batch=6", "--config", path}).settings().batch == 6);
}

CATCH_TEST_CASE("command line: errors name the flag, the config file's name the key", "[options]") {
  CATCH_CHECK_THAT(error_of([] { command_line(Command::Serve, {"--bogus", "1"}); }), Catch::Contains("unknown flag --bogus"));
  CATCH_CHECK_THAT(error_of([] { command_line(Command::Generate, {"--config", "x.json"}); }),
                   Catch::Contains("unknown flag --config"));
  CATCH_CHECK_THAT(error_of([] { command_line(Command::Serve, {"--data-dir"}); }), Catch::Contains("--data-dir needs a value"));
  CATCH_CHECK_THAT(error_of([] { command_line(Command::Serve, {"--port", "80x"}); }),
                   Catch::Contains("--port needs an integer, got \"80x\""));
  CATCH_CHECK_THAT(error_of([] { command_line(Command::Serve, {"--port", "70000"}); }),
                   Catch::Contains("--port must be in 0..65535"));
  CATCH_CHECK_THAT(error_of([] { command_line(Command::Serve, {"--batch-lease-ms", "5"}); }),
                   Catch::Contains("--batch-lease-ms must be >= 100"));
  CATCH_CHECK_THAT(error_of([] { command_line(Command::Generate, {"--min-group-fill", "half"}); }),
                   Catch::Contains("--min-group-fill needs a number"));
  CATCH_CHECK_THAT(error_of([] { command_line(Command::Generate, {"--n", "0"}); }), Catch::Contains("--n must be >= 1"));
  std::vector<char*> bare{const_cast<char*>("exspec"), const_cast<char*>("batch")};
  CATCH_CHECK_THAT(error_of([&] { CommandLine(Command::Batch, 2, bare.data(), 2); }), Catch::Contains("missing --input"));
  // --help asks for nothing else: the docs' commands are checked with it appended.
  std::vector<std::string> help_args{"exspec", "generate", "--help", "--batch", "B"};
  std::vector<char*> help_argv;
  for (auto& a : help_args) help_argv.push_back(a.data());
  CATCH_CHECK(CommandLine(Command::Generate, 5, help_argv.data(), 2).help());

  const std::string path = scratch() + "/bad.json";
  auto file_error = [&](const std::string& text) {
    std::ofstream(path) << text;
    return error_of([&] {
      Settings s;
      load_config_file(path, s);
    });
  };
  CATCH_CHECK_THAT(file_error(R"({"engine": {"bogus": 1}})"), Catch::Contains("unknown key \"engine.bogus\""));
  CATCH_CHECK_THAT(file_error(R"({"threads": 3})"), Catch::Contains("\"threads\" must be an object"));
  CATCH_CHECK_THAT(file_error(R"({"port": 70000})"), Catch::Contains(path + ": \"port\" must be in 0..65535"));
  CATCH_CHECK_THAT(file_error(R"({"limits": {"max_stop": -1}})"), Catch::Contains("\"limits.max_stop\" must be >= 0"));
  CATCH_CHECK_THAT(file_error(R"({"limits": {"batch_window_s": 0}})"), Catch::Contains("\"limits.batch_window_s\" must be >= 1"));
  CATCH_CHECK_THAT(file_error(R"({"engine": {"overlap": 1}})"), Catch::Contains("\"engine.overlap\" must be true or false"));
  CATCH_CHECK_THAT(file_error(R"({"engine": {"min_group_fill": "0.5"}})"), Catch::Contains("\"engine.min_group_fill\" must be a number"));
  CATCH_CHECK_THAT(file_error(R"({"threads": {"http": 4294967297}})"), Catch::Contains("\"threads.http\" must be in 0..2147483647"));
}

CATCH_TEST_CASE("help: every flag of the command with its default, and the file's keys for serve and batch", "[options]") {
  for (Command c : kCommands) {
    std::ostringstream out;
    print_help(out, c, "[flags]", "about\n");
    const std::string help = out.str();
    CATCH_INFO(help);
    for (const Option& o : option_table()) {
      if (o.takes(c)) CATCH_CHECK_THAT(help, Catch::Contains("  --" + o.flag + (o.metavar.empty() ? "" : " " + o.metavar)));
      if (c != Command::Generate && !o.key.empty()) CATCH_CHECK_THAT(help, Catch::Contains(o.key));
    }
    if (c == Command::Generate) CATCH_CHECK_THAT(help, !Catch::Contains("engine.batch"));
    const std::string batch_default = c == Command::Generate ? "(default 1)" : "(default 0)";
    const std::string batch_line = help.substr(help.find("  --batch B"), 200);
    CATCH_CHECK_THAT(batch_line, Catch::Contains(batch_default));
  }
}

CATCH_TEST_CASE("config/exspec.json holds every key of the table at its default, and nothing else", "[options][docs]") {
  const json shipped = json::parse(slurp(EXSPEC_SOURCE_DIR "/config/exspec.json"));
  CATCH_CHECK(shipped == json(default_config()));
  Settings s(Command::Generate);
  load_config_file(EXSPEC_SOURCE_DIR "/config/exspec.json", s);
  for (const Option& o : option_table())
    if (!o.key.empty()) CATCH_CHECK(o.get(s) == o.dflt);
}

CATCH_TEST_CASE("config/README.md documents every key of the table with its default, and nothing else", "[options][docs]") {
  std::istringstream in(slurp(EXSPEC_SOURCE_DIR "/config/README.md"));
  const std::map<std::string, std::string> sections{{"## Top level", ""}, {"## `engine`", "engine."},
                                                    {"## `threads`", "threads."}, {"## `limits`", "limits."}};
  std::map<std::string, std::string> documented;  // key -> default, as the README writes it
  std::string prefix;
  bool in_section = false;
  static const std::regex code("`([^`]*)`");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) {
      in_section = sections.count(line) > 0;
      prefix = in_section ? sections.at(line) : "";
      continue;
    }
    if (!in_section || line.rfind("| `", 0) != 0) continue;
    const size_t a = line.find('|', 1), b = line.find('|', a + 1);
    const std::string keys = line.substr(1, a - 1), defaults = line.substr(a + 1, b - a - 1);
    std::vector<std::string> k, d;
    for (auto it = std::sregex_iterator(keys.begin(), keys.end(), code); it != std::sregex_iterator(); ++it) k.push_back((*it)[1]);
    for (auto it = std::sregex_iterator(defaults.begin(), defaults.end(), code); it != std::sregex_iterator(); ++it)
      d.push_back((*it)[1]);
    CATCH_INFO(line);
    CATCH_REQUIRE(k.size() == d.size());
    for (size_t i = 0; i < k.size(); ++i) documented[prefix + k[i]] = d[i];
  }
  std::set<std::string> table_keys;
  for (const Option& o : option_table()) {
    if (o.key.empty()) continue;
    table_keys.insert(o.key);
    CATCH_INFO(o.key);
    CATCH_REQUIRE(documented.count(o.key));
    CATCH_CHECK(json::parse(documented[o.key]) == value_json(o.dflt));
  }
  for (const auto& [key, d] : documented) {
    CATCH_INFO(key);
    CATCH_CHECK(table_keys.count(key));
  }
}

CATCH_TEST_CASE("docs: serving.md and batch-jobs.md list exactly the flags of serve and batch", "[options][docs]") {
  const std::string serving = slurp(EXSPEC_SOURCE_DIR "/docs/serving.md");
  CATCH_CHECK(flags_in(serving, "The flags (`exspec serve --help`)", "\n\n") == flags_of(Command::Serve));
  const std::string batch = slurp(EXSPEC_SOURCE_DIR "/docs/batch-jobs.md");
  CATCH_CHECK(flags_in(batch, "Its flags:", "(`exspec batch --help`") == flags_of(Command::Batch));
}

// Moved from the HTTP unit tests with the config file's reader (http/ -> config/).
CATCH_TEST_CASE("config file: keys, types and unknown keys", "[options]") {
  const std::string path = scratch() + "/cfg.json";
  std::ofstream(path) << R"({"port": 9000, "engine": {"mode": "eqspec", "batch": 4}, "limits": {"max_tokens": 77},
                            "threads": {"http": 3}})";
  Settings c;
  load_config_file(path, c);
  CATCH_CHECK(c.port == 9000);
  CATCH_CHECK(c.mode == "eqspec");
  CATCH_CHECK(c.batch == 4);
  CATCH_CHECK(c.limits.max_tokens == 77);
  CATCH_CHECK(c.http_threads == 3);
  CATCH_CHECK(engine_options(c).decoding.window == 8);
  // In place the live sequences are the slots; exspec's window is refused there, naming them.
  Settings in_place;
  in_place.slots = 6;
  CATCH_CHECK(engine_options(in_place).decoding.slots == 6);
  CATCH_CHECK(engine_options(in_place).decoding.batch_size == 6);  // every ready slot a step
  in_place.window = 6;
  CATCH_CHECK_THROWS_WITH(engine_options(in_place), Catch::Contains("engine.slots (--slots)"));
  std::ofstream(path) << R"({"prot": 9000})";
  CATCH_CHECK_THROWS_WITH(load_config_file(path, c), Catch::Contains("unknown key \"prot\""));
  std::ofstream(path) << R"({"engine": {"batch": "4"}})";
  CATCH_CHECK_THROWS_WITH(load_config_file(path, c), Catch::Contains("engine.batch"));
  // draft_tokens: "auto" or a number >= 1, checked where the engine options are made.
  std::ofstream(path) << R"({"engine": {"draft_tokens": "auto", "max_draft_tokens": 6}})";
  load_config_file(path, c);
  CATCH_CHECK(engine_options(c).decoding.adaptive_k);
  CATCH_CHECK(engine_options(c).decoding.max_draft_tokens == 6);
  std::ofstream(path) << R"({"engine": {"draft_tokens": 5}})";
  load_config_file(path, c);
  CATCH_CHECK_FALSE(engine_options(c).decoding.adaptive_k);
  CATCH_CHECK(engine_options(c).decoding.draft_tokens == 5);
  std::ofstream(path) << R"({"engine": {"draft_tokens": "fast"}})";
  load_config_file(path, c);
  CATCH_CHECK_THROWS_WITH(engine_options(c), Catch::Contains("draft_tokens"));
  std::ofstream(path) << R"({"engine": {"draft_tokens": [3]}})";
  CATCH_CHECK_THROWS_WITH(load_config_file(path, c), Catch::Contains("engine.draft_tokens"));
  // draft_screen: "auto" (the default) or a count of candidates >= 0, 0 off.
  CATCH_CHECK(engine_options(Settings(Command::Serve)).draft_screen == kScreenAuto);
  for (const auto& [json, want] : std::vector<std::pair<std::string, int64_t>>{{"\"auto\"", kScreenAuto}, {"16", 16}, {"0", 0}}) {
    std::ofstream(path) << R"({"engine": {"draft_screen": )" << json << "}}";
    Settings s(Command::Serve);
    load_config_file(path, s);
    CATCH_CHECK(engine_options(s).draft_screen == want);
  }
  for (const char* bad : {"-1", "\"sometimes\"", "\"16x\""}) {
    std::ofstream(path) << R"({"engine": {"draft_screen": )" << bad << "}}";
    Settings s(Command::Serve);
    load_config_file(path, s);
    CATCH_CHECK_THROWS_WITH(engine_options(s), Catch::Contains("--draft-screen"));
  }
  // The shipped defaults load.
  Settings d;
  load_config_file(EXSPEC_SOURCE_DIR "/config/exspec.json", d);
  CATCH_CHECK(d.host == "127.0.0.1");
  CATCH_CHECK(d.port == 8000);
}
