// Jinja2's filters that lay out text: title, indent, center, truncate, wordcount.
#include "chat/jinja/builtins.h"
#include "chat/jinja/filters_internal.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/pystr.h"

namespace exspec::jinja::filters {
namespace {

std::string text_of(const Value& v) { return to_str(v); }

// Jinja2's title is not str.title: after each run of "-", whitespace, "(", "{", "[" or "<" the
// first code point is upper-cased (not title-cased) and the rest of the word lowered.
Value f_title(Interpreter&, const Value& v, const Args&) {
  const std::u32string u = pystr::decode(text_of(v));
  auto sep = [](char32_t c) { return pystr::is_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<'; };
  std::string out;
  size_t i = 0;
  while (i < u.size()) {
    size_t j = i;
    const bool run_sep = sep(u[i]);
    while (j < u.size() && sep(u[j]) == run_sep) ++j;
    const std::string part = pystr::encode(std::u32string_view(u).substr(i, j - i));
    out += run_sep ? part : pystr::upper(pystr::encode(u.substr(i, 1))) + pystr::lower(pystr::encode(u.substr(i + 1, j - i - 1)));
    i = j;
  }
  return Value(out);
}
// Jinja2's indent appends to its input as it is: only a str can be indented.
Value f_indent(Interpreter&, const Value& v, const Args& a) {
  if (v.is_undefined()) throw std::runtime_error(v.undefined_why());
  if (!v.is_string()) throw std::runtime_error(std::string("unsupported operand type(s) for +=: '") + v.type_name() + "' and 'str'");
  const Value* w = a.get(0, "width");
  const std::string ind = w && w->is_string() ? w->str() : std::string(size_t(w ? w->as_int() : 4), ' ');
  const std::vector<std::string> lines = pystr::splitlines(v.str() + "\n", false);  // Jinja2's quirk
  std::string out;
  if (flag(a, 2, "blank", false)) {
    for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" + ind : "") + lines[i];
  } else {
    for (size_t i = 0; i < lines.size(); ++i) out += i == 0 ? lines[i] : "\n" + (lines[i].empty() ? "" : ind) + lines[i];
  }
  if (flag(a, 1, "first", false)) out = ind + out;
  return Value(out);
}

Value f_center(Interpreter&, const Value& v, const Args& a) {
  const Value* w = a.get(0, "width");
  const std::string s = text_of(v);
  const int64_t width = w ? w->as_int() : 80, n = int64_t(pystr::length(s));
  if (width <= n) return Value(s);
  const int64_t pad = width - n, left = pad / 2 + (pad & width & 1);
  return Value(std::string(size_t(left), ' ') + s + std::string(size_t(pad - left), ' '));
}

// truncate(length=255, killwords=false, end='...', leeway=5): Jinja2's default policy leeway.
Value f_truncate(Interpreter& in, const Value& v, const Args& a) {
  const Value* len_v = a.get(0, "length");
  const Value* end_v = a.get(2, "end");
  const Value* lee_v = a.get(3, "leeway");
  const int64_t length = len_v ? len_v->as_int() : 255;
  const std::string end = end_v ? text_of(*end_v) : "...";
  const int64_t leeway = lee_v && !lee_v->is_none() ? lee_v->as_int() : 5;
  const int64_t end_n = int64_t(pystr::length(end));
  if (length < end_n) throw std::runtime_error("expected length >= " + std::to_string(end_n) + ", got " + std::to_string(length));
  if (leeway < 0) throw std::runtime_error("expected leeway >= 0, got " + std::to_string(leeway));
  if (!v.is_string()) {  // Jinja2 takes len() of its input as it is: a short list passes through
    if (apply_filter(in, "length", v, Args{}).as_int() <= length + leeway) return v;
    throw std::runtime_error(std::string("can only truncate a str, not ") + v.type_name());
  }
  const std::string s = v.str();
  if (int64_t(pystr::length(s)) <= length + leeway) return Value(s);
  const std::string head = pystr::slice(s, std::nullopt, length - end_n, 1);
  if (flag(a, 1, "killwords", false)) return Value(head + end);
  return Value(pystr::split(head, std::string(" "), 1, /*from_right=*/true)[0] + end);
}

// len(re.findall(r"\w+", s)): runs of letters, digits and "_".
Value f_wordcount(Interpreter&, const Value& v, const Args&) {
  int64_t n = 0;
  bool in_word = false;
  for (char32_t c : pystr::decode(text_of(v))) {
    const bool w = pystr::is_word(c);
    n += w && !in_word;
    in_word = w;
  }
  return Value(n);
}

}  // namespace

void add_text_filters(Table& t) {
  t.insert({{"title", f_title}, {"indent", f_indent}, {"center", f_center}, {"truncate", f_truncate},
            {"wordcount", f_wordcount}});
}

}  // namespace exspec::jinja::filters
