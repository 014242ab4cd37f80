// The form the JSON grammars write (json_schema.h): compact JSON text and the choice of strict
// objects. Apart from json_schema.h so that the schema compiler's files (json_compiler.h) use it
// and json_schema.cpp uses them, with no circle.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace exspec::grammar {

struct JsonSchemaOptions {
  // Objects whose schema lists properties but does not say additionalProperties get no others
  // (OpenAI's strict mode, and what generation wants). false: JSON Schema's own default, any
  // further property allowed. An object schema without properties allows any object either way.
  bool strict_objects = true;
};

// The compact JSON text of a value, as this grammar writes it (keys in the value's order;
// numbers as nlohmann writes them, integral floats without fraction).
std::string compact_json(const nlohmann::ordered_json& value);

}  // namespace exspec::grammar
