// Internal to the filters: the table's function type and the helpers the filter files share.
#pragma once
#include <map>
#include <string>

#include "chat/jinja/value.h"

namespace exspec::jinja {

class Interpreter;

namespace filters {

using FilterFn = Value (*)(Interpreter&, const Value&, const Args&);
using Table = std::map<std::string, FilterFn, std::less<>>;

// Jinja2's make_attrgetter: "a.b.0" looked up item by item (environment.getitem).
Value attribute_path(const Value& v, const std::string& path);
// A boolean argument at position i or named `name`.
bool flag(const Args& a, size_t i, const char* name, bool dflt);
// sort, dictsort, unique, min, max, groupby, batch, slice (filters_lists.cpp).
void add_list_filters(Table& t);
// title, indent, center, truncate, wordcount (filters_text.cpp).
void add_text_filters(Table& t);

}  // namespace filters
}  // namespace exspec::jinja
