// A byte trie over token strings in preorder arrays: node i's subtree is [i, end[i]), so a walk
// that finds a prefix dead skips the whole subtree with one jump. Node 0 is the root (the empty
// prefix). Used for the vocabulary and for each node's tokens that continue in the rule below.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace exspec::grammar {

struct Trie {
  std::vector<uint8_t> byte;        // the byte that leads to node i (root: 0)
  std::vector<uint16_t> depth;      // bytes from the root
  std::vector<uint32_t> end;        // one past the last node of i's subtree
  std::vector<uint32_t> tok_begin;  // node i's tokens: toks[tok_begin[i], tok_begin[i + 1])
  std::vector<uint32_t> toks;
  uint16_t max_depth = 0;

  size_t size() const { return byte.size(); }
  // Items: (bytes, token id); empty byte strings are left out. Byte strings longer than 65535 throw.
  static Trie build(std::vector<std::pair<std::string, uint32_t>> items);
  size_t memory_bytes() const;
};

}  // namespace exspec::grammar
