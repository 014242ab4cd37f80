// The text of a JSON instance in the form the grammar writes it, so that a JSON Schema test
// instance can be checked against the matcher: compact, object keys in the schema's property
// order (the listed ones first, in the order of the schema and of its allOf/anyOf/oneOf branches,
// then the others in the instance's order), integral numbers without fraction.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace exspec::grammar::test {

std::string canonical_text(const nlohmann::ordered_json& root_schema, const nlohmann::ordered_json& instance);

}  // namespace exspec::grammar::test
