// The mask of allowed tokens: one bit per token id over the whole vocabulary (bit i of word i/64).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace exspec::grammar {

class TokenBitset {
 public:
  TokenBitset() = default;
  explicit TokenBitset(size_t n) : n_(n), words_((n + 63) / 64, 0) {}
  size_t size() const { return n_; }
  void clear() { std::memset(words_.data(), 0, words_.size() * sizeof(uint64_t)); }
  void set(size_t i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }
  bool test(size_t i) const { return (words_[i >> 6] >> (i & 63)) & 1; }
  size_t count() const {
    size_t c = 0;
    for (uint64_t w : words_) c += static_cast<size_t>(__builtin_popcountll(w));
    return c;
  }
  const uint64_t* words() const { return words_.data(); }
  uint64_t* words() { return words_.data(); }
  size_t num_words() const { return words_.size(); }
  bool operator==(const TokenBitset& o) const { return n_ == o.n_ && words_ == o.words_; }
  bool operator!=(const TokenBitset& o) const { return !(*this == o); }

 private:
  size_t n_ = 0;
  std::vector<uint64_t> words_;
};

// Sets the logits of the tokens the mask does not allow to -infinity (the float64 CPU path; a
// device gets the words and does the same with its own kernel). n: logits.size() <= mask.size().
template <class T>
void apply_mask(const TokenBitset& mask, T* logits, size_t n) {
  const T minus_inf = -std::numeric_limits<T>::infinity();
  for (size_t i = 0; i < n; ++i)
    if (!mask.test(i)) logits[i] = minus_inf;
}

}  // namespace exspec::grammar
