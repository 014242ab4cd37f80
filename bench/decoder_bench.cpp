// Times one decoder forward at several batch sizes and new-token counts over a cache of a given
// length: the cost curve that speculation trades on (verify rows vs draft steps).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "model/decoder.h"
#include "model/runtime.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: decoder_bench MODEL_DIR [torch_threads] [context] [blas_threads]\n");
    return 2;
  }
  exspec::configure_threads(argc > 2 ? std::stoi(argv[2]) : 1, argc > 4 ? std::stoi(argv[4]) : 0);
  exspec::check_blas();
  const int64_t ctx = argc > 3 ? std::stoll(argv[3]) : 128;
  auto m = exspec::Decoder::load(argv[1], {at::kFloat, at::kCPU});
  std::printf("model %s: %.1fM parameters, threads %d, context %lld\n", argv[1], m->num_parameters() / 1e6,
              at::get_num_threads(), (long long)ctx);
  std::printf("%6s %6s %12s %14s\n", "batch", "tokens", "ms/forward", "ms/row-token");
  for (int64_t b : {1, 2, 4, 8, 16, 32}) {
    for (int64_t t : {1, 4, 6}) {
      exspec::KVCache c = m->new_cache(b, ctx + t);
      at::Tensor ids = at::randint(m->config().vocab_size, {b, ctx}, at::kLong);
      at::Tensor mask = at::ones({b, ctx}, at::kLong);
      m->forward(ids, at::arange(ctx, at::kLong).expand({b, ctx}), mask, c, 1);
      at::Tensor step = at::randint(m->config().vocab_size, {b, t}, at::kLong);
      at::Tensor pos = (at::arange(t, at::kLong) + ctx).expand({b, t});
      at::Tensor m2 = at::ones({b, ctx + t}, at::kLong);
      const int reps = 5;
      double best = 1e9;
      for (int r = 0; r < reps; ++r) {
        c.truncate(ctx);
        auto t0 = std::chrono::steady_clock::now();
        m->forward(step, pos, m2, c);
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::printf("%6lld %6lld %12.2f %14.3f\n", (long long)b, (long long)t, best, best / (b * t));
    }
  }
  return 0;
}
