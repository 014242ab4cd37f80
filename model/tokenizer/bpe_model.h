// tokenizer.json "model" of type BPE: vocab + ranked merges, applied per word with a linked list
// of symbols and a priority queue of candidate merges; results of short words are cached.
// For byte-level tokenizers the vocabulary is stored as raw bytes ("Ġhi" -> " hi"), so words
// need no character mapping on the way in and tokens none on the way out.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace exspec::tok {

class BpeModel {
 public:
  // byte_level: the pre-tokenizer maps bytes to GPT-2 characters (vocab keys are converted).
  // Throws std::runtime_error naming an unsupported type/option or a bad field.
  static std::unique_ptr<BpeModel> from_json(const nlohmann::json& model, bool byte_level);

  // Appends the ids of one pre-tokenized word (raw bytes when byte_level()).
  void encode_word(std::string_view word, std::vector<int64_t>& out) const;

  // Token as written in tokenizer.json ("Ġhi" for byte-level vocabularies).
  std::optional<int64_t> token_to_id(std::string_view token) const;
  // Stored token: raw bytes for byte-level vocabularies; nullptr for an unknown id.
  const std::string* id_to_token(int64_t id) const {
    return (id >= 0 && id < int64_t(tokens_.size()) && present_[size_t(id)]) ? &tokens_[size_t(id)]
                                                                            : nullptr;
  }
  // The token as written in tokenizer.json.
  std::optional<std::string> token_text(int64_t id) const;
  int64_t size() const { return int64_t(tokens_.size()); }  // max id + 1
  bool byte_level() const { return byte_level_; }
  bool byte_fallback() const { return byte_fallback_; }
  void clear_cache() const;

 private:
  struct Merge {
    uint32_t rank;
    int32_t id;
  };
  struct MergeMap {  // open addressing, (left id, right id) -> merge
    std::vector<uint64_t> keys;
    std::vector<Merge> vals;
    uint64_t mask = 0;
    void init(size_t n);
    void put(uint64_t key, Merge m);
    const Merge* find(uint64_t key) const;
  };
  struct Sym {
    int32_t id, prev, next;
  };
  void merge_symbols(std::vector<Sym>& syms, std::vector<int64_t>& out) const;
  std::optional<int32_t> lookup(std::string_view bytes) const {
    auto it = vocab_.find(bytes);
    return it == vocab_.end() ? std::nullopt : std::optional<int32_t>(it->second);
  }

  std::vector<std::string> tokens_;
  std::vector<bool> present_;
  std::vector<bool> converted_;  // stored as raw bytes (byte-level form in tokenizer.json)
  std::unordered_map<std::string_view, int32_t> vocab_;  // keys view tokens_
  MergeMap merges_;
  int32_t byte_ids_[256];      // byte-level: id of each single byte
  int32_t fallback_ids_[256];  // byte_fallback: id of <0xNN>
  bool byte_level_ = false, byte_fallback_ = false, ignore_merges_ = false, fuse_unk_ = false;
  int32_t unk_id_ = -1;

  static constexpr size_t kCacheCapacity = 1 << 16;
  static constexpr size_t kMaxCachedWord = 256;
  mutable std::shared_mutex cache_mu_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace exspec::tok
