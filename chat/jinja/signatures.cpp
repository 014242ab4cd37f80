#include "chat/jinja/signatures.h"

#include <map>
#include <stdexcept>
#include <vector>

namespace exspec::jinja {
namespace {

struct Sig {
  std::vector<const char*> params;  // after the value the filter, test or method applies to
  size_t required = 0;
  bool keywords = true;  // false: positional only (C methods, operator.eq ...)
};

using Table = std::map<std::string, Sig, std::less<>>;

// Jinja2 3.1's filters (Hugging Face's tojson); map, select, reject, their attr forms and format
// take *args/**kwargs and are not checked.
const Table& filters() {
  static const Table t{
      {"tojson", {{"ensure_ascii", "indent", "separators", "sort_keys"}}},
      {"length", {{}}}, {"count", {{}}}, {"default", {{"default_value", "boolean"}}}, {"d", {{"default_value", "boolean"}}},
      {"trim", {{"chars"}}}, {"upper", {{}}}, {"lower", {{}}}, {"capitalize", {{}}}, {"title", {{}}},
      {"string", {{}}}, {"safe", {{}}}, {"escape", {{}}}, {"e", {{}}}, {"forceescape", {{}}},
      {"replace", {{"old", "new", "count"}, 2}}, {"list", {{}}}, {"first", {{}}}, {"last", {{}}}, {"reverse", {{}}},
      {"join", {{"d", "attribute"}}}, {"items", {{}}}, {"sum", {{"attribute", "start"}}},
      {"int", {{"default", "base"}}}, {"float", {{"default"}}}, {"abs", {{}, 0, false}},
      {"round", {{"precision", "method"}}}, {"attr", {{"name"}, 1}}, {"indent", {{"width", "first", "blank"}}},
      {"center", {{"width"}}}, {"wordcount", {{}}}, {"truncate", {{"length", "killwords", "end", "leeway"}}},
      {"sort", {{"reverse", "case_sensitive", "attribute"}}}, {"dictsort", {{"case_sensitive", "by", "reverse"}}},
      {"unique", {{"case_sensitive", "attribute"}}}, {"max", {{"case_sensitive", "attribute"}}},
      {"min", {{"case_sensitive", "attribute"}}}, {"groupby", {{"attribute", "default", "case_sensitive"}, 1}},
      {"batch", {{"linecount", "fill_with"}, 1}}, {"slice", {{"slices", "fill_with"}, 1}}};
  return t;
}

const Table& tests() {
  static const Sig none{{}}, one_num{{"num"}, 1}, op{{"b"}, 1, false};
  static const Table t{
      {"defined", none}, {"undefined", none}, {"none", none}, {"boolean", none}, {"true", none}, {"false", none},
      {"integer", none}, {"float", none}, {"number", none}, {"string", none}, {"mapping", none},
      {"iterable", none}, {"sequence", none}, {"callable", {{}, 0, false}}, {"odd", none}, {"even", none},
      {"divisibleby", one_num}, {"eq", op}, {"ne", op}, {"lt", op}, {"le", op}, {"gt", op}, {"ge", op},
      {"==", op}, {"equalto", op}, {"!=", op}, {"<", op}, {"lessthan", op}, {"<=", op}, {">", op},
      {"greaterthan", op}, {">=", op}, {"in", {{"seq"}, 1}}, {"sameas", {{"other"}, 1}}, {"lower", none},
      {"upper", none}, {"escaped", none}, {"filter", none}, {"test", none}};
  return t;
}

// Python 3.11's str, dict and list methods: most are positional only.
const Table& methods() {
  static const Table t{
      {"startswith", {{"prefix", "start", "end"}, 1, false}}, {"endswith", {{"suffix", "start", "end"}, 1, false}},
      {"split", {{"sep", "maxsplit"}}}, {"rsplit", {{"sep", "maxsplit"}}},
      {"strip", {{"chars"}, 0, false}}, {"lstrip", {{"chars"}, 0, false}}, {"rstrip", {{"chars"}, 0, false}},
      {"upper", {{}}}, {"lower", {{}}}, {"title", {{}}}, {"capitalize", {{}}},
      {"replace", {{"old", "new", "count"}, 2, false}}, {"join", {{"iterable"}, 1, false}},
      {"find", {{"sub", "start", "end"}, 1, false}}, {"rfind", {{"sub", "start", "end"}, 1, false}},
      {"count", {{"sub", "start", "end"}, 1, false}}, {"splitlines", {{"keepends"}}},
      {"isdigit", {{}}}, {"isalpha", {{}}}, {"isalnum", {{}}}, {"isspace", {{}}}, {"isupper", {{}}}, {"islower", {{}}},
      {"removeprefix", {{"prefix"}, 1, false}}, {"removesuffix", {{"suffix"}, 1, false}},
      {"ljust", {{"width", "fillchar"}, 1, false}}, {"rjust", {{"width", "fillchar"}, 1, false}},
      {"center", {{"width", "fillchar"}, 1, false}}, {"zfill", {{"width"}, 1, false}},
      {"items", {{}}}, {"keys", {{}}}, {"values", {{}}}, {"get", {{"key", "default"}, 1, false}}};
  return t;
}

}  // namespace

void check_signature(const char* kind, const std::string& name, const Args& a) {
  const Table& t = kind[0] == 'f' ? filters() : kind[0] == 't' ? tests() : methods();
  auto it = t.find(name);
  if (it == t.end()) return;
  const Sig& s = it->second;
  const std::string who = std::string(kind) + " '" + name + "'";
  if (!s.keywords && !a.kw.empty()) throw std::runtime_error(who + " takes no keyword arguments");
  if (a.pos.size() > s.params.size())
    throw std::runtime_error(who + " takes at most " + std::to_string(s.params.size()) + " argument(s) (" +
                             std::to_string(a.pos.size()) + " given)");
  for (const auto& [k, v] : a.kw) {
    size_t i = 0;
    while (i < s.params.size() && k != s.params[i]) ++i;
    if (i == s.params.size()) throw std::runtime_error(who + " got an unexpected keyword argument '" + k + "'");
    if (i < a.pos.size()) throw std::runtime_error(who + " got multiple values for argument '" + k + "'");
  }
  for (size_t i = a.pos.size(); i < s.required; ++i) {
    bool given = false;
    for (const auto& kw : a.kw) given = given || kw.first == s.params[i];
    if (!given) throw std::runtime_error(who + " missing required argument '" + s.params[i] + "'");
  }
}

}  // namespace exspec::jinja
