// Added tokens (tokenizer.json "added_tokens"): found in the text before normalization and BPE
// by leftmost-longest matching on a byte trie, honouring special / lstrip / rstrip /
// single_word / normalized.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace exspec::tok {

struct AddedToken {
  int64_t id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;
};

struct Segment {
  std::string_view text;
  const AddedToken* token;  // nullptr: plain text to be tokenized by the model
};

class AddedTokens {
 public:
  void add(AddedToken t);  // a later token with the same content replaces the earlier one

  // Splits text into plain pieces and added tokens. Only tokens whose `normalized` flag equals
  // normalized_pass are matched; special tokens only when allow_special.
  void split(std::string_view text, bool normalized_pass, bool allow_special,
             std::vector<Segment>& out) const;

  const AddedToken* by_id(int64_t id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : &tokens_[it->second];
  }
  const AddedToken* by_content(std::string_view content) const;
  bool has_normalized() const { return has_normalized_; }
  const std::vector<AddedToken>& all() const { return tokens_; }
  int64_t max_id() const { return max_id_; }

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> next;
    int32_t token = -1;
  };
  int32_t child(int32_t node, unsigned char c) const;
  bool word_boundary_ok(std::string_view text, size_t begin, size_t end) const;

  std::vector<AddedToken> tokens_;
  std::unordered_map<int64_t, size_t> by_id_;
  std::vector<Node> trie_{Node{}};
  bool first_byte_[256] = {};
  bool has_normalized_ = false;
  int64_t max_id_ = -1;
};

}  // namespace exspec::tok
