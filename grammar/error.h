// The one error every front end and the compiler throw: what was not supported or not valid, and
// where (a JSON Schema path such as "#/properties/a/not", "offset 12" in a regular expression,
// "line 3, column 5" in a grammar). The HTTP layer turns it into a 400 naming both.
#pragma once
#include <stdexcept>
#include <string>

namespace exspec::grammar {

class GrammarError : public std::runtime_error {
 public:
  GrammarError(std::string construct, std::string where, const std::string& message)
      : std::runtime_error(message + (where.empty() ? "" : " (at " + where + ")")),
        construct_(std::move(construct)), where_(std::move(where)) {}
  const std::string& construct() const { return construct_; }  // the keyword or construct
  const std::string& where() const { return where_; }          // its path or position
 private:
  std::string construct_, where_;
};

}  // namespace exspec::grammar
