// Python's format(): str.format's replacement fields ("{0.name!r:>{w}.2f}") and the format-spec
// mini-language (fill, align, sign, #, 0, width, grouping, precision, type), and printf-style
// "%-5.2f" % args, on template values. Errors as Python raises them (std::runtime_error).
#pragma once
#include <string>

#include "chat/jinja/value.h"

namespace exspec::jinja {

// format(v, spec).
std::string format_value(const Value& v, const std::string& spec);
// fmt.format(*args, **kwargs).
std::string str_format(const std::string& fmt, const Args& a);
// fmt % args: a tuple (a list in our values) spreads over the conversions, a dict serves %(name)s.
std::string percent_format(const std::string& fmt, const Value& args);

}  // namespace exspec::jinja
