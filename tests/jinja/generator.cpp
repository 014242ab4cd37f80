#include "tests/jinja/generator.h"

#include <functional>

namespace exspec::jinjatest {
namespace {

enum class T { Int, Float, Str, List, Bool, Dict, Any };

class Gen {
 public:
  explicit Gen(uint64_t seed) : s_(seed) { s_ = next(); }  // seeds far apart, not one draw apart

  Case make(size_t i) {
    Case c;
    loops_ = 0;
    c.vars = vars();
    std::string tpl;
    const int n = 1 + int(below(3));
    for (int k = 0; k < n; ++k) tpl += stmt(0) + pick({"\n", " | ", "\n  ", ""});
    c.tpl = tpl;
    c.name = "case " + std::to_string(i);
    return c;
  }

 private:
  uint64_t next() {  // splitmix64
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
  bool chance(int percent) { return int(below(100)) < percent; }
  std::string pick(std::initializer_list<const char*> xs) { return *(xs.begin() + below(xs.size())); }
  std::string num(int lo, int hi) { return std::to_string(lo + int(below(uint64_t(hi - lo + 1)))); }

  ordered_json vars() {
    ordered_json v;
    v["n"] = int(below(15)) - 3;
    v["f"] = ordered_json::array({-2.5, 0.1, 3.75, 1e3, 2.0, 0.125})[below(6)];
    v["s"] = ordered_json::array({" 1 2 3 4 5 ", "Hello World", "straße", "ΣΑΣ ΟΔΟΣ", "a,b,,c", "éclair über",
                                  "snake_case-name", "  padded\ttext\n", "", "ǆemal ﬁne"})[below(10)];
    ordered_json xs = ordered_json::array();
    for (uint64_t k = below(6); k > 0; --k) xs.push_back(int(below(9)) - 2);
    v["xs"] = xs;
    v["words"] = ordered_json::array({"pear", "Apple", "fig", "apple", "Banana"});
    v["users"] = ordered_json::parse(R"([{"name": "Bob", "age": 25, "city": "NY"},
      {"name": "alice", "age": 30, "city": "ca"}, {"name": "Charlie", "age": 30, "city": "CA"},
      {"name": "dave", "age": 25, "city": "ny"}, {"name": "Eve", "age": 41, "city": "NY"}])");
    if (chance(20)) v["users"][3].erase("city");  // groupby / sort by city then fail, as in Python
    v["d"] = ordered_json::parse(R"({"b": 2, "a": 1, "C": 3})");
    v["msg"] = ordered_json::parse(R"({"role": "user", "content": "hi", "name": null})");
    return v;
  }

  std::string str_lit() {
    return pick({"'a'", "'Hello World'", "' x y '", "'ß'", "'ΣΑΣ'", "'é'", "''", "'a-b c'", "'x,y,z'",
                 "\"it's\"", "'ǆ'", "'İ'", "'12'", "'3.5'", "'abc'", "'a\\tb\\n'", "'\\u00e9\\x41'", "'q\\'s'"});
  }
  std::string int_lit() { return chance(90) ? num(-3, 12) : pick({"0x1F", "0b101", "0o17", "1_000", "0"}); }
  std::string float_lit() { return pick({"0.5", "2.0", "-1.25", "1e3", "0.1", "2.675", "1e-5", "3.0"}); }

  std::string any(int d) { return e(T(below(6)), d); }

  // An expression of (mostly) type t; now and then one of any type, to reach Python's errors.
  std::string e(T t, int d) {
    if (t == T::Any || chance(2)) return any_expr(d);
    if (d >= 3) return leaf(t);
    switch (t) {
      case T::Int: return int_expr(d + 1);
      case T::Float: return float_expr(d + 1);
      case T::Str: return str_expr(d + 1);
      case T::List: return list_expr(d + 1);
      case T::Bool: return bool_expr(d + 1);
      case T::Dict: return dict_expr(d + 1);
      default: return leaf(t);
    }
  }

  std::string any_expr(int d) {
    if (chance(5)) return pick({"undefined_name", "msg.missing", "msg.name", "none", "users[9]", "d.zz"});
    return e(T(below(6)), d + 1);
  }

  std::string leaf(T t) {
    switch (t) {
      case T::Int: return chance(50) ? int_lit() : pick({"n", "xs|length", "s|length", "d|length"});
      case T::Float: return chance(50) ? float_lit() : "f";
      case T::Str: return chance(50) ? str_lit() : pick({"s", "msg.role", "words[0]", "users[1].name"});
      case T::List: return pick({"xs", "words", "[1, 2, 3]", "[]", "[3, 1, 2, 1]", "(1, 'a')", "['b', 'A', 'c']"});
      case T::Bool: return pick({"true", "false", "n > 2", "not xs"});
      case T::Dict: return pick({"d", "msg", "{'k': 1, 'j': [2]}", "{}"});
      default: return "n";
    }
  }

  std::string int_expr(int d) {
    switch (below(12)) {
      case 0: return "(" + e(T::Int, d) + " " + pick({"+", "-", "*", "//", "%"}) + " " + e(T::Int, d) + ")";
      case 1: return int_lit() + " ** " + num(0, 4);
      case 2: return "-" + e(T::Int, d);
      case 3: return e(T::List, d) + "|" + pick({"length", "sum", "max", "min", "first", "last", "count"});
      case 4: return "(" + e(T::Str, d) + ")." + pick({"find", "count", "rfind"}) + "(" + str_lit() + ")";
      case 5: return e(T::Any, d) + "|int" + (chance(30) ? "(" + int_lit() + ")" : "");
      case 6: return "(" + e(T::Int, d) + " if " + e(T::Bool, d) + " else " + e(T::Int, d) + ")";
      case 7: return e(T::Float, d) + "|round|int";
      case 8: return e(T::Str, d) + "|wordcount";
      case 9: return "xs|sum(start=" + int_lit() + ")";
      case 10: return "users|map(attribute='age')|" + pick({"sum", "max", "min"});
      default: return leaf(T::Int);
    }
  }

  std::string float_expr(int d) {
    switch (below(8)) {
      case 0: return "(" + e(T::Int, d) + " / " + e(T::Int, d) + ")";
      case 1: return "(" + e(T::Float, d) + " " + pick({"+", "-", "*", "//", "%", "/"}) + " " + e(T::Int, d) + ")";
      case 2: return e(T::Float, d) + "|round" + pick({"", "(1)", "(2)", "(1, 'floor')", "(0, 'ceil')", "(precision=3)"});
      case 3: return e(T::Any, d) + "|float";
      case 4: return e(T::Float, d) + "|abs";
      case 5: return "-" + e(T::Float, d);
      default: return leaf(T::Float);
    }
  }

  std::string str_expr(int d) {
    switch (below(26)) {
      case 0: return chance(85) ? e(T::Str, d) + "|" + pick({"upper", "lower", "title", "capitalize", "trim", "string"}) : leaf(T::Str) + "|reverse";
      case 1: return "(" + e(T::Str, d) + ")." + pick({"upper", "lower", "title", "capitalize", "strip", "lstrip", "rstrip"}) + "()";
      case 2: return "(" + e(T::Str, d) + ")." + pick({"strip", "lstrip", "rstrip"}) + "(" + pick({"' '", "'a '", "'ΣS'", "none", "'\\n\\t '"}) + ")";
      case 3: return "(" + e(T::Any, d) + " ~ " + e(T::Any, d) + ")";
      case 4: return "(" + e(T::Str, d) + " + " + e(T::Str, d) + ")";
      case 5: return "'" + pick({"{}", "{:>6}", "{:<4}|", "{:^7}", "{!r}", "{0}-{0}", "{:.2f}", "{:05d}", "{:+d}", "{:,}",
                                "{:x}", "{:#o}", "{:e}", "{:g}", "{:.3}", "{:*^9}", "{:=+7}", "{:%}", "{:.1%}", "{:s}", "{:c}"}) +
                    "'.format(" + e(T::Any, d) + ")";
      case 6: return "'{a}/{b}'.format(" + pick({"a=1, b=2", "b='x', a=n", "**d", "a=1", "**{'a': s, 'b': f}"}) + ")";
      case 7: return "'" + pick({"%s", "%5s", "%-5s|", "%d", "%05.1f", "%.2f", "%x", "%r", "%+d", "%s-%s"}) + "' % " +
                    (chance(50) ? e(T::Any, d) : "(" + e(T::Any, d) + ", " + e(T::Any, d) + ")");
      case 8: return "'" + pick({"%s!", "%d items", "%.3f", "%s=%s"}) + "'|format(" + e(T::Any, d) + (chance(40) ? ", " + e(T::Any, d) : "") + ")";
      case 9: return e(T::List, d) + "|join" + pick({"", "(', ')", "('-')", "(d='/')"});
      case 10: return e(T::Str, d) + "|truncate(" + pick({"5", "9", "3, true", "7, false, '~'", "8, true, '..', 0", "length=4, leeway=0", "2"}) + ")";
      case 11: return e(T::Str, d) + "|center(" + num(0, 12) + ")";
      case 12: return "(" + leaf(T::Str) + ")[" + pick({"1:3", "::-1", ":2", "-2:", "0", "-1", "::2"}) + "]";
      case 13: return e(T::Any, d) + "|tojson" + pick({"", "(indent=2)", "(sort_keys=true)", "(separators=(',', ':'))"});
      case 14: return e(T::Str, d) + "|replace(" + str_lit() + ", " + str_lit() + pick({"", ", 1", ", count=2"}) + ")";
      case 15: return "(" + e(T::Str, d) + ").replace(" + str_lit() + ", " + str_lit() + ")";
      case 16: return "(" + e(T::Str, d) + ")." + pick({"ljust", "rjust", "center", "zfill"}) + "(" + num(0, 9) + ")";
      case 17: return e(T::Str, d) + "|indent(" + pick({"2", "'> '", "3, true", "2, first=true, blank=true"}) + ")";
      case 18: return e(T::Any, d) + "|default(" + str_lit() + pick({"", ", true", ", boolean=true"}) + ")";
      case 19: return "users|map(attribute='" + pick({"name", "city", "age"}) + "'" + pick({"", ", default='?'"}) + ")|join(',')";
      case 20: return "(" + e(T::Str, d) + ")." + pick({"removeprefix", "removesuffix"}) + "(" + str_lit() + ")";
      case 21: return "(" + e(T::Str, d) + " * " + num(0, 3) + ")";
      case 22: return e(T::List, d) + "|string";
      case 23: return e(T::Dict, d) + "|string";
      default: return leaf(T::Str);
    }
  }

  std::string sort_args() {
    return pick({"", "(reverse=true)", "(true)", "(case_sensitive=true)", "(reverse=true, case_sensitive=true)", "(false, true)"});
  }

  std::string list_expr(int d) {
    switch (below(26)) {
      case 0: return "[" + e(T::Any, d) + ", " + e(T::Any, d) + "]";
      case 1: return e(T::List, d) + "|sort" + sort_args();
      case 2: return "users|sort(attribute='" + pick({"age", "name", "age,name", "city", "age,city"}) + "'" +
                    pick({"", ", reverse=true", ", case_sensitive=true"}) + ")|map(attribute='name')|list";
      case 3: return "users|sort(attribute='name')|sort(reverse=true, attribute='age')|map(attribute='name')|list";
      case 4: return "(" + e(T::Str, d) + ")." + pick({"split", "rsplit"}) + "(" +
                    pick({"", "none", "none, 0", "none, 1", "' '", "',', 1", "',', -1", "maxsplit=2", "sep=' ', maxsplit=1", "',,'"}) + ")";
      case 5: return e(T::List, d) + "|" + pick({"batch(2)", "batch(3, 0)", "slice(2)", "slice(3, 'x')", "batch(1)", "slice(4)"}) + "|list";
      case 6: return e(T::List, d) + "|" + pick({"unique", "reverse", "select('odd')", "reject('even')", "select", "map('string')", "map('upper')"}) + "|list";
      case 7: return "(" + leaf(T::List) + ")[" + pick({"1:", ":-1", "::-1", "::2", "1:2"}) + "]";
      case 8: return "range(" + (chance(50) ? int_lit() : chance(50) ? int_lit() + ", " + int_lit() : pick({"0, 10, 3", "5, 0, -2"})) + ")|list";
      case 9: return e(T::Dict, d) + "|dictsort" + pick({"", "(reverse=true)", "(true)", "(by='value')", "(false, 'value', true)"});
      case 10: return "(" + e(T::Dict, d) + ")." + pick({"items", "keys", "values"}) + "()|list";
      case 11: return "users|groupby('" + pick({"city", "age"}) + "'" + pick({"", ", default='ZZ'", ", case_sensitive=true"}) + ")|list";
      case 12: return "users|groupby('age')|map(attribute='grouper')|list";
      case 13: return "users|selectattr('" + pick({"city", "age"}) + "'" + pick({"", ", 'defined'", ", 'equalto', 30", ", 'gt', 26"}) + ")|map(attribute='name')|list";
      case 14: return "(" + e(T::List, d) + " + " + e(T::List, d) + ")";
      case 15: return e(T::Str, d) + "|list";
      case 16: return e(T::List, d) + "|map(attribute='" + pick({"0", "name"}) + "')|list";
      case 17: return "words|sort(case_sensitive=" + pick({"true", "false"}) + ")|unique(" + pick({"", "true"}) + ")|list";
      case 18: return "[" + e(T::Str, d) + "|max, " + e(T::List, d) + "|min]";
      case 22: return pick({"users|selectattr('city', 'in', ['NY', 'CA'])|map(attribute='name')|list", "users|rejectattr('age', 'lt', 30)|list|length",
                            "[users|sum(attribute='age'), xs|sum(start=0.5)]", "[d|first, msg|list, d|items|list]", "[msg|attr('role'), d|attr('zz')]",
                            "('<a href=\"x\">&'|escape) ~ ('<b>'|forceescape) ~ (('x' ~ '&')|e)", "[(1, 2)|string, (1,)|tojson, none|tojson]",
                            "[xs|tojson(indent=1), d|tojson(separators=[',', ':'], sort_keys=true)]", "[1 < 'a']", "[[1, 2] < [1, 3], (1, 2) == [1, 2], [1] + (2,)]",
                            "[words|select('in', ['fig', 'pear'])|list, words|reject('lower')|list, words|map('length')|list]",
                            "[xs|map('abs')|list, words|map('truncate', 3, true, '')|list, words|map('replace', 'a', '4')|list]",
                            "[n|string|center(5), f|string|length, s|wordcount, s|list|length]"});
      case 21: return pick({"xs|sort(reversed=true)", "xs|join(',', 'x', 1)", "(s).strip(chars=' ')", "(s).split(',', 1, 2)",
                            "xs|batch()", "(s).replace('a')", "xs|first(1)", "range(stop=3)", "xs|sort(true, reverse=true)",
                            "(n is divisibleby)", "(n is eq(b=1))", "(d).get()", "(s).startswith('a', start=0)",
                            "xs|unique(attribute=none, case_sensitive=true)|list", "(s).splitlines(keepends=true)"});
      case 19: return "(" + e(T::Str, d) + ").splitlines()";
      case 20: return pick({"xs|sort(**{'reverse': true})", "(s).split(*[',', 1])", "range(*[1, 5])|list",
                            "words|sort(*[false, true])", "(s).rsplit(*[' '], **{'maxsplit': 1})", "xs|batch(*[2], **{'fill_with': 0})|list",
                            "users|selectattr(*['age', 'gt', 26])|map(**{'attribute': 'name'})|list", "range(*'ab')|list",
                            "xs|sort(reverse=true, **{'reverse': false})", "[dict(**msg), namespace(**d).a]", "words|join(*[])"});
      default: return leaf(T::List);
    }
  }

  std::string bool_expr(int d) {
    switch (below(14)) {
      case 0: return "(" + e(T::Int, d) + " " + pick({"<", "<=", ">", ">=", "==", "!="}) + " " + e(T::Any, d) + ")";
      case 1: return "(" + e(T::Any, d) + " " + pick({"in", "not in"}) + " " + e(T::Any, d) + ")";
      case 2: return "(" + e(T::Any, d) + " is " + pick({"", "not "}) +
                    pick({"defined", "none", "string", "number", "integer", "float", "mapping", "sequence", "iterable",
                          "callable", "lower", "upper", "boolean", "true", "false", "odd", "even", "divisibleby 3",
                          "in [1, 2]", "eq 2", "gt 1", "sameas none"}) + ")";
      case 3: return "(not " + e(T::Any, d) + ")";
      case 4: return "(" + e(T::Any, d) + " " + pick({"and", "or"}) + " " + e(T::Any, d) + ")";
      case 5: return "(" + e(T::Str, d) + ")." + pick({"startswith", "endswith"}) + "(" + pick({"'a'", "('x', 'H')", "('a', 'é')", "''", "('',)"}) + ")";
      case 6: return "(" + e(T::Str, d) + ")." + pick({"isupper", "islower", "isalpha", "isdigit", "isalnum", "isspace"}) + "()";
      case 7: return "(" + e(T::Str, d) + " < " + e(T::Str, d) + ")";
      case 8: return "(1 < " + e(T::Int, d) + " < 9)";
      case 9: return "(undefined_name is callable)";
      case 10: return "(" + e(T::Int, d) + " is divisibleby(*[3]))";
      case 11: return "(" + e(T::Any, d) + " is " + pick({"sameas(*[none])", "in(**{'value': [1, 2]})", "eq(*[2])", "callable"}) + ")";
      default: return leaf(T::Bool);
    }
  }

  std::string dict_expr(int d) {
    switch (below(6)) {
      case 0: return "{'x': " + e(T::Any, d) + ", " + str_lit() + ": " + e(T::Any, d) + "}";
      case 1: return "dict(" + pick({"a=1", "d", "msg, z=0", "**d", "a=n, **msg"}) + ")";
      default: return leaf(T::Dict);
    }
  }

  std::string out(const std::string& x) {
    return std::string("{{") + (chance(15) ? "- " : " ") + x + (chance(15) ? " -" : " ") + "}}";
  }
  std::string tag(const std::string& x) {
    return std::string("{%") + (chance(20) ? "- " : " ") + x + (chance(20) ? " -" : " ") + "%}";
  }

  std::string stmt(int d) {
    if (d >= 2) return out(any(1));
    switch (below(20)) {
      case 0: case 1: case 2: return out(any(0));
      case 3: return for_loop(d);
      case 4: return tag("if " + e(T::Bool, 1)) + stmt(d + 1) + (chance(50) ? tag("elif " + e(T::Bool, 1)) + stmt(d + 1) : "") +
                     (chance(50) ? tag("else") + "\n  " + stmt(d + 1) : "") + tag("endif");
      case 5: return tag("set x = " + any(0)) + out("x") + (chance(40) ? tag("set x, y = " + pick({"1, 2", "[3, 4]", "'ab'", "(5,)"})) + out("x ~ y") : "");
      case 6: return tag("set t " + pick({"", "| upper", "| trim | title", "| replace('a', 'o')"})) + " " + stmt(d + 1) + " " + tag("endset") + out("t");
      case 7: return macro(d);
      case 8: return tag("set ns = namespace(total=0, items=[])") + tag("for x in " + e(T::List, 1)) +
                     tag("set ns.total = ns.total + (x|length if x is string else 1)") + tag("endfor") + out("ns.total");
      case 9: return tag("filter " + pick({"upper", "trim", "title", "replace('o', '0')", "center(12)", "indent(2, true)"})) +
                     stmt(d + 1) + "\n" + tag("endfilter");
      case 10: return tag("with a = " + any(1) + ", b = " + any(1)) + out("a ~ '/' ~ b") + tag("endwith") + out("a is defined");
      case 11: return call_block(d);
      case 12: return chance(30) ? out("raise_exception(" + str_lit() + ")") : out(any(0));
      case 14: return tag("set x = " + int_lit()) + tag("for i in [1, 2]") + tag("set x = x + i") + out("x") + tag("endfor") + out("x");
      case 15: return tag("macro r(k)") + tag("if k > 0") + out("k") + out("r(k - 1)") + tag("endif") + tag("endmacro") + out("r(n % 5)");
      case 16: return pick({"{# c #}", "{#- c -#}", "\n  {#- c #}  x"}) + pick({"{% raw %}{{ x }}{%- y %}{% endraw %}", "a\n  {%+ if true %}b{% endif %}",
                            "  {%- if true %}\n  b\n  {%- endif %}\n", "\n    {% if true %}\n    b\n    {% endif %}\n    c"});
      case 17: return tag("for x in " + e(T::List, 1)) + out("loop.changed(x is string)") + out("loop.depth") + tag("endfor");
      case 13: return tag("for k, v in " + pick({"d|dictsort", "d.items()", "msg|items", "users|groupby('city')"}) + "") +
                      out("k ~ '=' ~ v") + tag("endfor");
      default: return out(any(0)) + pick({" ", "\n", "  \n  "}) + out(any(0));
    }
  }

  std::string for_loop(int d) {
    ++loops_;
    std::string body = out(pick({"loop.index", "loop.index0", "loop.revindex", "loop.first", "loop.last", "loop.length",
                                 "loop.cycle('a', 'b', 'c')", "loop.previtem", "loop.nextitem", "loop.changed(x)",
                                 "loop.revindex0", "x"}));
    if (chance(40)) body += tag("if loop.index is " + pick({"even", "odd"})) + tag(pick({"continue", "break"})) + tag("endif");
    if (chance(40)) body += stmt(d + 1);
    --loops_;
    return tag("for x in " + e(T::List, 1) + (chance(25) ? " if " + pick({"x", "x is number", "x is string and x"}) : "")) +
           body + pick({"", ","}) + (chance(30) ? tag("else") + "empty" : "") + tag("endfor");
  }

  std::string macro(int d) {
    (void)d;
    const std::string params = pick({"", "a", "a, b=2", "a, b='x', c=none", "a=1, b=a"});
    const std::string body = pick({"[{{ a }}]", "{{ a ~ b }}", "{{ varargs }}", "{{ kwargs }}", "{{ varargs|length }}:{{ kwargs|dictsort }}",
                                   "{{ a }}{{ varargs|join(',') }}", "{{ a is defined }}", "{{ a }}-{{ kwargs.get('z', 0) }}"});
    std::string calls;
    for (int k = 0; k < 2; ++k)
      calls += out("m(" + pick({"", "1", "1, 2", "1, 2, 3", "a=5", "b=1", "z=9", "*[1, 2]", "*xs", "**{'a': 3}", "**d",
                                "1, *[2], z=3", "*'ab', **{'z': 1}", "1, b=2, **{'z': 0}", "a=1, **{'a': 2}", "*none", "**[1]",
                                "1, a=2", "**msg", "*words[:2]"}) + ")");
    return tag("macro m(" + params + ")") + body + tag("endmacro") + calls;
  }

  std::string call_block(int d) {
    (void)d;
    return tag("macro w(" + pick({"", "x=1"}) + ")") + pick({"<{{ caller() }}>", "<{{ caller(7) }}>", "<{{ caller() }}{{ x }}>", "{{ x }}"}) + tag("endmacro") +
           tag(std::string("call") + pick({"", "(v)", "(v=0)"}) + " w(" + pick({"", "2", "x=3"}) + ")") +
           pick({"in", "{{ v }}", "{{ v * 2 }}"}) + tag("endcall");
  }

  uint64_t s_;
  int loops_ = 0;
};

}  // namespace

std::vector<Case> generate_cases(uint64_t seed, size_t count) {
  Gen g(seed);
  std::vector<Case> out;
  for (size_t i = 0; i < count; ++i) out.push_back(g.make(i));
  return out;
}

}  // namespace exspec::jinjatest
