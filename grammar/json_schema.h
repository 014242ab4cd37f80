// JSON Schema, `json_object`, a choice of strings and a regular expression, as Grammars.
//
// Output form (README.md): compact JSON, no whitespace anywhere ({"a":1,"b":[1,2]}), as
// OpenAI's strict mode writes it; a model can never ramble in whitespace. Object properties come
// in the schema's order, listed ones first, then additional ones where allowed. Strings are
// written as Python's json.dumps(ensure_ascii=False) does inside constrained strings (pattern,
// format, enum, const); free strings (and minLength/maxLength) accept every JSON escape.
// Numbers with bounds are written without exponent; integers without fraction.
//
// Supported keywords and what is refused: README.md. An unsupported keyword or value throws
// GrammarError naming the keyword and its JSON pointer path, e.g. "#/properties/a/not".
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/expr.h"
#include "grammar/json_form.h"

namespace exspec::grammar {

// The schema's text keeps its property order (parsed as nlohmann::ordered_json): pass the text
// as the client sent it, or an ordered_json.
Grammar grammar_from_json_schema(std::string_view schema_text, const JsonSchemaOptions& options = {});
Grammar grammar_from_parsed_schema(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options = {});
// response_format json_object: any JSON object.
Grammar grammar_json_object();
// One of the strings, exactly (vLLM's guided_choice).
Grammar grammar_from_choices(const std::vector<std::string>& choices);
// The whole text matches the pattern (vLLM's guided_regex; the syntax of regex.h).
Grammar grammar_from_regex(std::string_view pattern);

}  // namespace exspec::grammar
