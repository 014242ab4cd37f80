#include "grammar/trie.h"

#include <algorithm>
#include <stdexcept>

namespace exspec::grammar {

Trie Trie::build(std::vector<std::pair<std::string, uint32_t>> items) {
  items.erase(std::remove_if(items.begin(), items.end(), [](const auto& x) { return x.first.empty(); }), items.end());
  std::sort(items.begin(), items.end());
  Trie t;
  auto add_node = [&](uint8_t b, uint16_t d) {
    t.byte.push_back(b);
    t.depth.push_back(d);
    t.end.push_back(0);
    t.tok_begin.push_back(static_cast<uint32_t>(t.toks.size()));
    t.max_depth = std::max(t.max_depth, d);
    return static_cast<uint32_t>(t.byte.size() - 1);
  };
  std::vector<uint32_t> path{add_node(0, 0)};  // path[d]: the open node at depth d
  const std::string* prev = nullptr;
  for (const auto& [bytes, id] : items) {
    if (bytes.size() > 65535) throw std::invalid_argument("a token longer than 65535 bytes");
    size_t lcp = 0;
    if (prev)
      while (lcp < prev->size() && lcp < bytes.size() && (*prev)[lcp] == bytes[lcp]) ++lcp;
    while (path.size() > lcp + 1) {  // close the nodes below the common prefix
      t.end[path.back()] = static_cast<uint32_t>(t.byte.size());
      path.pop_back();
    }
    for (size_t d = lcp; d < bytes.size(); ++d)
      path.push_back(add_node(static_cast<uint8_t>(bytes[d]), static_cast<uint16_t>(d + 1)));
    t.toks.push_back(id);
    prev = &bytes;
  }
  while (!path.empty()) {
    t.end[path.back()] = static_cast<uint32_t>(t.byte.size());
    path.pop_back();
  }
  t.tok_begin.push_back(static_cast<uint32_t>(t.toks.size()));
  return t;
}

size_t Trie::memory_bytes() const {
  return byte.size() * (1 + 2 + 4 + 4) + toks.size() * 4;
}

}  // namespace exspec::grammar
