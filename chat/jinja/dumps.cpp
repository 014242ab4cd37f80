// json.dumps as Python writes it (Hugging Face's tojson filter calls it with ensure_ascii=False).
#include <algorithm>
#include <cmath>

#include "chat/jinja/builtins.h"
#include "chat/jinja/pystr.h"

namespace exspec::jinja {
namespace {

struct Dumper {
  bool ensure_ascii;
  int indent;  // < 0: one line
  std::string item_sep, key_sep;
  bool sort_keys;
  std::string out;

  void newline(int level) {
    out += '\n';
    out.append(size_t(indent * level), ' ');
  }

  void number(double d) {
    if (std::isnan(d)) out += "NaN";
    else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
    else out += float_repr(d);
  }

  void write(const Value& v, int level) {
    switch (v.kind()) {
      case Value::Kind::None: out += "null"; return;
      case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
      case Value::Kind::Int: out += std::to_string(v.as_int()); return;
      case Value::Kind::Float: number(v.as_number()); return;
      case Value::Kind::String: out += pystr::json_quote(v.str(), ensure_ascii); return;
      case Value::Kind::Array: {
        const Array& a = v.array();
        if (a.empty()) {
          out += "[]";
          return;
        }
        out += '[';
        for (size_t i = 0; i < a.size(); ++i) {
          if (i) out += item_sep;
          if (indent >= 0) newline(level + 1);
          write(a[i], level + 1);
        }
        if (indent >= 0) newline(level);
        out += ']';
        return;
      }
      case Value::Kind::Object: {
        if (v.object().is_namespace) throw std::runtime_error("Object of type Namespace is not JSON serializable");
        std::vector<const std::pair<std::string, Value>*> items;
        for (const auto& kv : v.object().items) items.push_back(&kv);
        if (items.empty()) {
          out += "{}";
          return;
        }
        if (sort_keys)
          std::stable_sort(items.begin(), items.end(), [](auto* x, auto* y) {
            return pystr::decode(x->first) < pystr::decode(y->first);
          });
        out += '{';
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += item_sep;
          if (indent >= 0) newline(level + 1);
          out += pystr::json_quote(items[i]->first, ensure_ascii);
          out += key_sep;
          write(items[i]->second, level + 1);
        }
        if (indent >= 0) newline(level);
        out += '}';
        return;
      }
      case Value::Kind::Undefined: throw std::runtime_error("Object of type Undefined is not JSON serializable");
      case Value::Kind::Callable: throw std::runtime_error("Object of type function is not JSON serializable");
    }
  }
};

}  // namespace

std::string dumps(const Value& v, bool ensure_ascii, int indent, const std::string& item_sep,
                  const std::string& key_sep, bool sort_keys) {
  Dumper d{ensure_ascii, indent, item_sep, key_sep, sort_keys, {}};
  d.write(v, 0);
  return std::move(d.out);
}

}  // namespace exspec::jinja
