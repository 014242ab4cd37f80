// Internal to the JSON Schema front end (json_schema.h): the compiler state its files share.
#pragma once
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "grammar/budget.h"
#include "grammar/expr.h"
#include "grammar/thompson.h"
#include "grammar/json_form.h"

namespace exspec::grammar::json_detail {

using Json = nlohmann::ordered_json;

// The NFA states one rule may have (build_automaton's bound): what counts are checked against.
constexpr size_t kNfaLimit = 4 * kMaxRuleStates;

class SchemaCompiler {
 public:
  SchemaCompiler(const Json& root, const JsonSchemaOptions& options) : root_(root), options_(options) {}

  // The text of a value that `schema` (at JSON pointer `path`) accepts.
  ExprPtr value(const Json& schema, const std::string& path);
  Grammar finish(ExprPtr root);

  [[noreturn]] void refuse(const std::string& keyword, const std::string& path, const std::string& why) const;
  // The schema a "#..." reference points to (refused: other documents, anchors).
  const Json& resolve(const std::string& ref, const std::string& path) const;
  const JsonSchemaOptions& options() const { return options_; }

  // Rules every reference shares (their token sets are computed once).
  ExprPtr string_rule();
  ExprPtr number_rule();
  ExprPtr integer_rule();
  ExprPtr any_value_rule();
  ExprPtr any_object_rule();
  // A rule for `body`, shared by equal keys (e.g. one rule per distinct string constraint).
  ExprPtr shared_rule(const std::string& key, const std::string& name, const std::function<ExprPtr()>& body);
  // A rule of its own (objects, arrays): inlined later when small and not recursive.
  ExprPtr own_rule(const std::string& name, ExprPtr body);

 private:
  ExprPtr typed(const std::string& type, const Json& schema, const std::string& path);
  ExprPtr alternatives(const Json& schema, const std::string& path);
  ExprPtr enumeration(const Json& schema, const std::string& path);
  ExprPtr ref_expr(const std::string& ref, const std::string& path);
  int rule(const std::string& name, bool shared);

  const Json& root_;
  JsonSchemaOptions options_;
  Grammar g_;
  std::map<std::string, int> shared_;  // key -> rule
  std::map<std::string, int> refs_;    // "#/..." -> rule
};

// json_values.cpp
ExprPtr json_string_char();                   // one character of a JSON string, any escape
ExprPtr free_number(bool integer);            // any JSON number (integer: no fraction, no exponent)
ExprPtr string_expr(SchemaCompiler& c, const Json& schema, const std::string& path);
bool json_equal(const Json& a, const Json& b);  // JSON Schema equality (1 == 1.0)
std::string type_of(const Json& v);             // "null", "boolean", "integer", "number", ...
// json_numbers.cpp
ExprPtr number_expr(SchemaCompiler& c, const Json& schema, const std::string& path, bool integer);
// json_formats.cpp: the characters of a `format`, or nullptr when the format is not supported
ExprPtr format_expr(const std::string& format);
// json_objects.cpp
ExprPtr object_expr(SchemaCompiler& c, const Json& schema, const std::string& path);
ExprPtr array_expr(SchemaCompiler& c, const Json& schema, const std::string& path);
// json_merge.cpp: allOf as one schema; oneOf where its branches cannot overlap
Json merge_all_of(SchemaCompiler& c, const Json& schema, const std::string& path);
void check_one_of(SchemaCompiler& c, const Json& branches, const std::string& path);
// json_keywords.cpp
bool is_annotation(const std::string& keyword);
void check_keywords(const SchemaCompiler& c, const Json& schema, const std::string& path, bool root);
std::string pointer_token(const std::string& key);  // escapes ~ and / for a JSON pointer
// A count keyword's value (minItems, maxLength...; check_keywords made it a non-negative
// integer), or dflt when absent; values beyond any budget are clamped, never wrapped.
int64_t count_of(const Json& schema, const char* keyword, int64_t dflt);
// Refuses `keyword` at `path` when `states` (a lower bound of what its expansion needs) is over
// the automaton's budget: checked before the expansion is built.
void check_states(const SchemaCompiler& c, const std::string& keyword, const std::string& path, size_t states, size_t limit);

}  // namespace exspec::grammar::json_detail
