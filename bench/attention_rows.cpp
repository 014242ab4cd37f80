// One layer's attention at a decode step, the kernel alone (model/kernels/attention_kernel.h,
// torch-free) on one thread: B rows of T new tokens each (1: a decode step; K + 1: a verify)
// over a context of S keys, float32.
// Repeated calls find the keys and values in the caches, where a step finds them after its
// layer's products evicted them: the figure is the kernel's arithmetic, not the store's read
// (for that, decoder_bench's forward). Medians and ranges over the repeats, and a checksum of the
// outputs, so that two builds can be compared on the same bits.
//
//   build/attention_rows [--batches 1,8,16] [--context 64,512] [--tokens 1] [--heads 12]
//                        [--kv-heads 4] [--head-dim 64] [--reps 200]
// EXSPEC_ISA=avx2 (or plain) times the path a CPU of that level takes.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "model/kernels/attention_kernel.h"

namespace {

std::vector<int64_t> list(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::stoll(item));
  return v;
}

void run(int64_t B, int64_t S, int64_t T, int64_t H, int64_t Hkv, int64_t D, int reps) {
  using namespace exspec::attn;
  Shape s;
  s.B = B, s.H = H, s.Hkv = Hkv, s.T = T, s.S = S, s.D = D, s.scale = 1.0f / std::sqrt(static_cast<float>(D));
  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  std::vector<float> q(B * H * T * D), k(B * Hkv * S * D), v(k.size()), out(q.size());
  for (auto* t : {&q, &k, &v})
    for (float& x : *t) x = normal(gen);
  const View qv{q.data(), H * T * D, T * D, D}, kv{k.data(), Hkv * S * D, S * D, D}, vv{v.data(), Hkv * S * D, S * D, D};
  const View ov{out.data(), H * T * D, T * D, D};
  std::vector<double> us;
  for (int r = 0; r < reps + 10; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    attention(s, qv, kv, vv, nullptr, ov, 0, B * Hkv * T);
    const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (r >= 10) us.push_back(t);  // the first calls grow the kernel's scratch
  }
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (float x : out) sum += x;
  std::printf("| %lld | %lld | %.2f | %.2f-%.2f | %.4f |\n", static_cast<long long>(B), static_cast<long long>(S),
              us[us.size() / 2], us.front(), us.back(), sum);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> batches{1, 8, 16}, contexts{64, 512};
  int64_t H = 12, Hkv = 4, D = 64, T = 1;
  int reps = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--batches") batches = list(v);
    else if (a == "--context") contexts = list(v);
    else if (a == "--heads") H = std::stoll(v);
    else if (a == "--kv-heads") Hkv = std::stoll(v);
    else if (a == "--head-dim") D = std::stoll(v);
    else if (a == "--reps") reps = std::stoi(v);
    else if (a == "--tokens") T = std::stoll(v);
    else {
      std::fprintf(stderr, "attention_rows: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::printf("one layer, one thread: %lld heads, %lld kv heads, head_dim %lld, %lld new tokens a row, float32, %s\n",
              static_cast<long long>(H), static_cast<long long>(Hkv), static_cast<long long>(D), static_cast<long long>(T),
              exspec::isa::name(exspec::attn::kernel_isa(), exspec::isa::Family::F32));
  std::printf("| rows | context | us (median) | min-max | checksum |\n|--:|--:|--:|--:|--:|\n");
  for (int64_t S : contexts)
    for (int64_t B : batches) run(B, S, T, H, Hkv, D, reps);
  return 0;
}
