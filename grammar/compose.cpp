#include "grammar/compose.h"

#include "grammar/error.h"
#include "grammar/gbnf.h"
#include "grammar/vocabulary.h"

namespace exspec::grammar {
namespace {

// The parts' rules in one grammar (references renumbered, names prefixed so that they stay
// distinct); `roots` gets each part's root rule.
Grammar merge(const std::vector<Grammar>& parts, std::vector<int>& roots) {
  Grammar g;
  for (size_t p = 0; p < parts.size(); ++p) {
    const int offset = static_cast<int>(g.rules.size());
    for (const Rule& r : parts[p].rules)
      g.add("p" + std::to_string(p) + "_" + r.name,
            r.body ? map_refs(r.body, [offset](int c) { return ref(c + offset); }) : nullptr, r.shared);
    roots.push_back(parts[p].root + offset);
  }
  return g;
}

Grammar with_root(Grammar g, ExprPtr body) {
  g.root = g.add("root", std::move(body));
  return inline_rules(g);
}

}  // namespace

Grammar literal_grammar(std::string bytes) {
  // A marker byte in text would write a special token: those come from special_token_grammar.
  if (bytes.find(static_cast<char>(kSpecialMarker)) != std::string::npos)
    throw GrammarError("literal", "", "a literal holds the byte 0xFF, which no UTF-8 text has");
  Grammar g;
  g.root = g.add("root", lit(std::move(bytes)));
  return g;
}

Grammar special_token_grammar(int32_t id) {
  if (id < 0) throw GrammarError("special token", "", "a special token's id must be >= 0");
  Grammar g;
  g.root = g.add("root", lit(special_token_bytes(id)));
  return g;
}

Grammar concat(const std::vector<Grammar>& parts) {
  std::vector<int> roots;
  Grammar g = merge(parts, roots);
  std::vector<ExprPtr> items;
  for (int r : roots) items.push_back(ref(r));
  return with_root(std::move(g), seq(std::move(items)));
}

Grammar one_of(const std::vector<Grammar>& parts) {
  if (parts.empty()) throw GrammarError("alternatives", "", "a choice among no grammars matches nothing");
  std::vector<int> roots;
  Grammar g = merge(parts, roots);
  std::vector<ExprPtr> items;
  for (int r : roots) items.push_back(ref(r));
  return with_root(std::move(g), alt(std::move(items)));
}

Grammar repeated(const Grammar& item, const Grammar& separator, int min, int max) {
  if (min < 1 || (max >= 0 && max < min))
    throw GrammarError("repetition", "", "a repetition needs 1 <= min <= max (or max unbounded)");
  std::vector<int> roots;
  Grammar g = merge({item, separator}, roots);
  const ExprPtr one = ref(roots[0]), sep = ref(roots[1]);
  return with_root(std::move(g), seq({one, repeat(seq({sep, one}), min - 1, max < 0 ? -1 : max - 1)}));
}

}  // namespace exspec::grammar
