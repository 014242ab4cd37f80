#include "app/args.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace exspec {

Args::Args(int argc, char** argv, int first, const std::set<std::string>& valued, const std::set<std::string>& switches) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument \"" + a + "\"");
    std::string name = a.substr(2), value;
    const auto eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (switches.count(name)) {
      values_.emplace_back(name, eq == std::string::npos ? "1" : value);
      continue;
    }
    if (!valued.count(name)) throw std::invalid_argument("unknown flag --" + name);
    if (eq == std::string::npos) {
      if (i + 1 >= argc) throw std::invalid_argument("--" + name + " needs a value");
      value = argv[++i];
    }
    values_.emplace_back(name, value);
  }
}

bool Args::has(const std::string& name) const {
  for (const auto& [k, v] : values_)
    if (k == name) return true;
  return false;
}

std::string Args::get(const std::string& name, const std::string& dflt) const {
  std::string out = dflt;
  for (const auto& [k, v] : values_)
    if (k == name) out = v;  // the last one wins, as in most CLIs
  return out;
}

std::string Args::need(const std::string& name) const {
  if (!has(name)) throw std::invalid_argument("missing --" + name);
  return get(name, "");
}

int64_t Args::get_int(const std::string& name, int64_t dflt) const {
  if (!has(name)) return dflt;
  const std::string v = get(name, "");
  try {
    size_t used = 0;
    int64_t n = std::stoll(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return n;
  } catch (const std::exception&) {
    throw std::invalid_argument("--" + name + " needs an integer, got \"" + v + "\"");
  }
}

std::vector<std::string> Args::all(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : values_)
    if (k == name) out.push_back(v);
  return out;
}

std::vector<int64_t> parse_id_list(const std::string& text) {
  std::vector<int64_t> ids;
  std::string cur;
  auto flush = [&] {
    if (cur.empty()) return;
    try {
      size_t used = 0;
      ids.push_back(std::stoll(cur, &used));
      if (used != cur.size()) throw std::invalid_argument(cur);
    } catch (const std::exception&) {
      throw std::invalid_argument("not a token id: \"" + cur + "\"");
    }
    cur.clear();
  };
  for (char c : text) {
    if (c == ',' || c == ' ') flush();
    else cur.push_back(c);
  }
  flush();
  return ids;
}

std::vector<std::vector<int64_t>> read_prompt_ids(const std::vector<std::string>& id_lists,
                                                  const std::vector<std::string>& files) {
  std::vector<std::vector<int64_t>> prompts;
  for (const auto& s : id_lists) prompts.push_back(parse_id_list(s));
  for (const auto& path : files) {
    std::ifstream in(path);
    if (!in) throw std::invalid_argument(path + ": cannot open");
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
        prompts.push_back(j.at("prompt_ids").get<std::vector<int64_t>>());
      } catch (const std::exception& e) {
        throw std::invalid_argument(path + ":" + std::to_string(n) + ": expected {\"prompt_ids\": [ints]}: " + e.what());
      }
    }
  }
  return prompts;
}

}  // namespace exspec
