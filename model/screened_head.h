// A draft's head read in 4 bits (issue 62). A 4-bit copy of the head (the screen,
// model/kernels/q4_screen.h: 0.53 of its Q8_0's bytes, 0.69 of a Q6_K's) scores the whole
// vocabulary; each row's best `candidates` tokens by the screen are scored again by the int8 head
// itself (Linear::columns: the same bits as its whole product, in Q8_0, 4-bit or K-quant blocks),
// and their logits replace the screen's. So the draft proposes what its whole int8 head proposes
// wherever that token is among the screen's best, and a sampling draft's q is still one
// distribution over the vocabulary.
// Only a draft is loaded so: the target verifies with its whole head, so the output cannot
// change; the screen moves only what a draft token costs (fewer bytes from memory, a working set
// that fits the cache better) and, where it misses the head's choice, how many drafts are accepted.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "model/head_screen.h"
#include "model/linear.h"

namespace exspec {
namespace q4s {
struct Weight;
}

// Whether auto screens a draft's head: where it is int8 and reading the screen (`screen_bytes`)
// in place of the head (`head_bytes`) saves at least a ninth of the bytes a draft token reads
// (`product_bytes`, the head's included). A Q8_0 head must then be about a quarter of them (the
// screen reads 0.53 of its bytes), a Q6_K head (a Q4_K_M file's) about a third (0.69); a 4-bit
// head saves nothing. Less is not worth the screen's memory and its chance of missing the head's
// choice.
bool screen_pays(int64_t head_bytes, int64_t screen_bytes, int64_t product_bytes);
bool screen_pays(const Linear& head, int64_t product_bytes);  // false for a head that is not int8

class ScreenedHead {
 public:
  ScreenedHead() = default;
  // head: the draft's whole head [vocab, in] in int8 (Q8_0, 4-bit or K-quant blocks); the screen
  // is its rows' own values quantised again in 4 bits. Throws std::invalid_argument for another
  // head.
  ScreenedHead(const Linear& head, int64_t candidates);

  bool active() const { return candidates_ > 0; }
  int64_t candidates() const { return candidates_; }
  int64_t bytes() const;
  // h [..., in] float32 -> [..., vocab]; `head` is the one this was made from.
  at::Tensor operator()(const at::Tensor& h, const Linear& head) const;

 private:
  at::Tensor screen(const at::Tensor& x) const;  // x [N, in] float32 -> the screen's [N, vocab]
  std::shared_ptr<const q4s::Weight> screen_;  // [vocab, in]
  int64_t candidates_ = 0;
};

}  // namespace exspec
