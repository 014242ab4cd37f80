// A Jinja template as Hugging Face's apply_chat_template runs it (Jinja2's
// ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loop controls; tojson with
// ensure_ascii=False; raise_exception; strftime_now), interpreted in C++. Parsing refuses what the
// interpreter cannot run, naming the line and the construct.
#pragma once
#include <ctime>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/jinja/value.h"

namespace exspec::jinja {

struct Stmt;

class Template {
 public:
  // Throws TemplateError ("line N: what").
  static Template parse(const std::string& source);
  // `vars`: a JSON object of the template's variables. `now`: what strftime_now formats (UTC).
  // Throws TemplateError: raised() for the template's own raise_exception.
  std::string render(const nlohmann::ordered_json& vars, std::time_t now) const;
  std::string render(const Object& vars, std::time_t now) const;

 private:
  std::shared_ptr<const std::vector<std::shared_ptr<const Stmt>>> body_;
};

}  // namespace exspec::jinja
