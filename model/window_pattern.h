// Gemma's window pattern, one owner for config.json, GGUF and make-model: every layer slides but
// each n-th (Hugging Face's sliding_window_pattern, llama.cpp's set_swa_pattern). Torch-free.
#pragma once
#include <cstdint>
#include <vector>

#include "model/layer_kind.h"

namespace exspec {

// n > 0 (the callers check it): layer i is full when (i + 1) % n == 0.
inline std::vector<AttentionWindow> windows_but_each(int64_t layers, int64_t n) {
  std::vector<AttentionWindow> out;
  for (int64_t i = 0; i < layers; ++i) out.push_back((i + 1) % n != 0 ? AttentionWindow::Sliding : AttentionWindow::Full);
  return out;
}

}  // namespace exspec
