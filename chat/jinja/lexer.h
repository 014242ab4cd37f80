// Jinja2's lexer as Hugging Face configures it (trim_blocks, lstrip_blocks, newlines normalized
// to "\n", one trailing newline dropped): template text becomes text, {{ }} and {% %} tags with
// the tokens inside them; comments vanish, {% raw %} bodies become text.
#pragma once
#include <string>
#include <vector>

namespace exspec::jinja {

struct Token {
  enum Kind { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, End };
  Kind kind;
  std::string text;  // Text: the data; Name: the name; String: the unescaped value; Op: the operator
  int line = 1;
};

struct LexOptions {
  bool trim_blocks = true, lstrip_blocks = true, keep_trailing_newline = false;
};

// Throws TemplateError (line) on an unclosed tag, comment or string, or an unknown character.
std::vector<Token> lex(const std::string& source, const LexOptions& opt = {});

}  // namespace exspec::jinja
