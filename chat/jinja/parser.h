// Tokens to statements (Jinja2's grammar and operator precedence). What the interpreter cannot
// run is refused here, with its line: an unknown tag ({% include %}, {% extends %}, {% do %}...),
// filter, test, method or function, as Jinja2 refuses unknown filters when it compiles.
#pragma once
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/lexer.h"

namespace exspec::jinja {

// Throws TemplateError (line, construct).
Body parse(const std::vector<Token>& tokens);

}  // namespace exspec::jinja
