// String formats as regular languages over characters: date, time, date-time (RFC 3339, with
// the real calendar: month lengths and leap years), uuid, email (ajv's fast form: a dot-atom at
// dot-separated host labels), ipv4.
#include "grammar/json_compiler.h"
#include "grammar/regex.h"

namespace exspec::grammar::json_detail {
namespace {

ExprPtr re(const char* pattern) { return parse_regex(pattern, RegexMode::FullMatch); }

ExprPtr date() {
  // Year 0000 does not exist (Python's date.fromisoformat refuses it).
  const ExprPtr year = minus(re("[0-9]{4}"), lit("0000"));
  const ExprPtr leap = minus(re("[0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00"), lit("0000"));
  const ExprPtr month_day = re("(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8])");
  return alt({seq({year, lit("-"), month_day}), seq({leap, lit("-02-29")})});
}

ExprPtr time() {
  // Seconds up to 59 (no leap second: Python's time refuses 60); fractions of 1 to 6 digits.
  return re("([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])");
}

}  // namespace

ExprPtr format_expr(const std::string& f) {
  if (f == "date") return date();
  if (f == "time") return time();
  if (f == "date-time") return seq({date(), lit("T"), time()});
  if (f == "uuid") return re("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
  if (f == "email")  // ajv's "fast" email format: dot-atom @ dot-separated labels (no length limits)
    return re("[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
              "@([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\\.)+[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?");
  if (f == "ipv4") return re("((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])");
  return nullptr;
}

}  // namespace exspec::grammar::json_detail
