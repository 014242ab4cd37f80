// What the option table's rows do: values from the command line's text and the file's JSON,
// checked; the defaults of a command; the config file read over Settings.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "config/options.h"

namespace exspec {
namespace {

using nlohmann::json;

void check_range(const Option& o, const Value& v, const std::string& where) {
  if (o.type == Type::Int) {
    const int64_t n = std::get<int64_t>(v);
    if (n >= o.min && n <= o.max) return;
    if (o.max == std::numeric_limits<int64_t>::max())
      throw std::invalid_argument(where + " must be >= " + std::to_string(o.min));
    throw std::invalid_argument(where + " must be in " + std::to_string(o.min) + ".." + std::to_string(o.max));
  }
  if (o.type == Type::Real) {
    const double x = std::get<double>(v);
    if (!std::isfinite(x) || x < o.real_min || x > o.real_max)
      throw std::invalid_argument(where + " must be a finite number" +
                                  (std::isinf(o.real_min) ? std::string() : " >= " + value_text(o.real_min)) +
                                  (std::isinf(o.real_max) ? std::string() : ", <= " + value_text(o.real_max)));
  }
}

// The settings sections of the file: the key prefixes of the rows ("engine", "limits").
bool is_section(const std::string& path) {
  for (const Option& o : option_table())
    if (o.key.size() > path.size() && o.key.compare(0, path.size(), path) == 0 && o.key[path.size()] == '.') return true;
  return false;
}

void read_object(const json& obj, const std::string& prefix, const std::string& file, Settings& into) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string key = prefix + it.key();
    const std::string where = file + ": \"" + key + "\"";
    if (const Option* o = find_key(key)) {
      if (!it->is_null()) o->set(into, value_from_json(*o, *it, where));
    } else if (is_section(key)) {
      if (!it->is_object()) throw std::invalid_argument(where + " must be an object");
      read_object(*it, key + ".", file, into);
    } else {
      throw std::invalid_argument(file + ": unknown key \"" + key + "\" (see config/README.md)");
    }
  }
}

}  // namespace

const char* command_name(Command c) {
  switch (c) {
    case Command::Serve: return "serve";
    case Command::Batch: return "batch";
    default: return "generate";
  }
}

Settings::Settings(Command command) {
  for (const Option& o : option_table())
    if (o.set) o.set(*this, o.default_for(command));
}

const Option* find_flag(Command c, const std::string& flag) {
  for (const Option& o : option_table())
    if (!o.flag.empty() && o.flag == flag && o.takes(c)) return &o;
  return nullptr;
}

const Option* find_key(const std::string& key) {
  for (const Option& o : option_table())
    if (!o.key.empty() && o.key == key) return &o;
  return nullptr;
}

Value value_from_text(const Option& o, const std::string& text, const std::string& where) {
  Value v;
  switch (o.type) {
    case Type::Bool: return true;  // a switch: given
    case Type::Text:
    case Type::IntOrText:
    case Type::List: return text;
    case Type::Int:
    case Type::Real: {
      const char* what = o.type == Type::Int ? "an integer" : "a number";
      size_t used = 0;
      try {
        if (o.type == Type::Int) v = static_cast<int64_t>(std::stoll(text, &used));
        else v = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (text.empty() || used != text.size()) throw std::invalid_argument(where + " needs " + what + ", got \"" + text + "\"");
      break;
    }
  }
  check_range(o, v, where);
  return v;
}

Value value_from_json(const Option& o, const json& j, const std::string& where) {
  Value v;
  switch (o.type) {
    case Type::Bool:
      if (!j.is_boolean()) throw std::invalid_argument(where + " must be true or false");
      return j.get<bool>();
    case Type::Text:
    case Type::List:
      if (!j.is_string()) throw std::invalid_argument(where + " must be a string");
      return j.get<std::string>();
    case Type::IntOrText:
      if (j.is_number_integer()) return std::to_string(j.get<int64_t>());
      if (!j.is_string()) throw std::invalid_argument(where + " must be a string or an integer");
      return j.get<std::string>();
    case Type::Int:
      if (!j.is_number_integer()) throw std::invalid_argument(where + " must be an integer");
      // Beyond int64 is beyond every row's range: checked as the largest int64.
      v = j.is_number_unsigned() && j.get<uint64_t>() > INT64_MAX ? INT64_MAX : j.get<int64_t>();
      break;
    case Type::Real:
      if (!j.is_number()) throw std::invalid_argument(where + " must be a number");
      v = j.get<double>();
      break;
  }
  check_range(o, v, where);
  return v;
}

json value_json(const Value& v) {
  return std::visit([](const auto& x) { return json(x); }, v);
}

std::string value_text(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return value_json(v).dump();
}

nlohmann::ordered_json default_config() {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const Option& o : option_table()) {
    if (o.key.empty()) continue;
    nlohmann::ordered_json* at = &out;
    std::string rest = o.key;
    for (size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1))
      at = &(*at)[rest.substr(0, dot)];
    (*at)[rest] = value_json(o.dflt);
  }
  return out;
}

void load_config_file(const std::string& path, Settings& into) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read config file " + path);
  json j;
  try {
    j = json::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument(path + ": the top level must be a JSON object");
  read_object(j, "", path, into);
}

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/exspec";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/exspec";
  return "/tmp/exspec-cache";
}

}  // namespace exspec
