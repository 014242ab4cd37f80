#include "chat/jinja/template.h"

#include "chat/jinja/interpreter.h"
#include "chat/jinja/lexer.h"
#include "chat/jinja/parser.h"

namespace exspec::jinja {

Template Template::parse(const std::string& source) {
  Template t;
  t.body_ = std::make_shared<const Body>(jinja::parse(lex(source)));
  return t;
}

std::string Template::render(const Object& vars, std::time_t now) const {
  Interpreter in(vars, now);
  return in.render(*body_);
}

std::string Template::render(const nlohmann::ordered_json& vars, std::time_t now) const {
  const Value v = Value::from_json(vars);
  if (!v.is_object()) throw TemplateError("the template's variables must be a JSON object", 0);
  return render(v.object(), now);
}

}  // namespace exspec::jinja
