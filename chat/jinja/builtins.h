// The names a template may use beyond its own: filters, tests, globals and the methods of str,
// dict, list and loop. The parser refuses any other at load; the interpreter calls these.
#pragma once
#include <string>
#include <string_view>

#include "chat/jinja/value.h"

namespace exspec::jinja {

class Interpreter;

bool is_filter(std::string_view name);
bool is_test(std::string_view name);
bool is_method(std::string_view name);
bool is_dict_method(std::string_view name);  // items, keys, values, get
bool is_global(std::string_view name);

// `v | name(args)`. Throws TemplateError's message as std::runtime_error (the caller adds the line).
Value apply_filter(Interpreter& in, const std::string& name, const Value& v, const Args& args);
// `v is name(args)`.
bool apply_test(Interpreter& in, const std::string& name, const Value& v, const Args& args);
// `v.name(args)`: str, dict and list methods.
Value call_method(const Value& v, const std::string& name, const Args& args);
// `v.name` for a str / dict / list: the bound method, or undefined.
Value method_value(const Value& v, const std::string& name);

// json.dumps(v, ensure_ascii, indent, separators, sort_keys) as Python writes it; indent < 0: none.
std::string dumps(const Value& v, bool ensure_ascii, int indent, const std::string& item_sep,
                  const std::string& key_sep, bool sort_keys);

}  // namespace exspec::jinja
