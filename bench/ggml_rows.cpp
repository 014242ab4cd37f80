// ggml's side of build/kernel_rows (issue 70): the same "forward" of the 150M Llama shape's
// products (16 layers of qkv 768 -> 1280, o 768 -> 768, gate and up 768 -> 4096, down 2048 -> 768,
// then the 768 -> 32,000 head) at M rows, every weight in one GGML type, on llama.cpp v0.5.0's own
// CPU backend as llama-server sets it up: each weight in the first of the CPU's extra buffer types
// (the repacked layouts of ggml-cpu/repack.cpp) that takes its product, as llama-model-loader's
// weight_buft_supported decides, else the plain CPU buffer; the activations quantised inside
// each product as ggml does. Random weights: the time does not depend on their values.
//
// Built and run by bench/ggml_rows.sh against third_party/llama.cpp-v0.5.0 (bench/llama_cpp_build.sh):
//   ggml_rows TYPE[,TYPE...] [threads 2] [rounds 7] [max rows 16]
// Prints, per type and M in 1, 2, 4, 8, 16: the median ms of a forward over the rounds (each round
// times every M once, in turn), its min-max, and which buffer type held the layers' weights.
#include <ggml-alloc.h>
#include <ggml-backend.h>
#include <ggml-cpu.h>
#include <ggml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Shape {
  int64_t in, out, count;
};
const Shape kShapes[] = {{768, 1280, 16}, {768, 768, 16}, {768, 4096, 16}, {2048, 768, 16}, {768, 32000, 1}};

ggml_type type_named(const std::string& name) {
  for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
    const char* n = ggml_type_name(static_cast<ggml_type>(t));
    if (n && name == n) return static_cast<ggml_type>(t);
  }
  std::fprintf(stderr, "ggml_rows: no GGML type %s\n", name.c_str());
  std::exit(2);
}

// The first extra buffer type whose device takes w's product (llama-model-loader's check), else the CPU's own.
ggml_backend_buffer_type_t choose_buft(ggml_tensor* w, ggml_backend_dev_t dev, const std::vector<ggml_backend_buffer_type_t>& extra) {
  for (ggml_backend_buffer_type_t buft : extra) {
    ggml_init_params p = {ggml_tensor_overhead() * 8, nullptr, true};
    ggml_context* ctx = ggml_init(p);
    ggml_tensor* b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, w->ne[0], 512);
    ggml_tensor* op = ggml_mul_mat(ctx, w, b);
    w->buffer = ggml_backend_buft_alloc_buffer(buft, 0);
    const bool ok = ggml_backend_dev_supports_op(dev, op);
    ggml_backend_buffer_free(w->buffer);
    w->buffer = nullptr;
    ggml_free(ctx);
    if (ok) return buft;
  }
  return ggml_backend_dev_buffer_type(dev);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run_type(ggml_type type, ggml_backend_t backend, ggml_backend_dev_t dev, const std::vector<ggml_backend_buffer_type_t>& extra,
              int rounds, int max_rows) {
  // The weights: one no-alloc context per buffer type, each weight's bytes from random values.
  std::vector<ggml_tensor*> weights;
  ggml_init_params wp = {ggml_tensor_overhead() * 128, nullptr, true};
  ggml_context* probe = ggml_init(wp);
  std::vector<std::pair<ggml_backend_buffer_type_t, ggml_context*>> ctxs;
  std::string layers_in;
  for (const Shape& s : kShapes)
    for (int64_t i = 0; i < s.count; ++i) {
      ggml_tensor* w0 = ggml_new_tensor_2d(probe, type, s.in, s.out);
      ggml_backend_buffer_type_t buft = choose_buft(w0, dev, extra);
      auto it = std::find_if(ctxs.begin(), ctxs.end(), [&](auto& c) { return c.first == buft; });
      if (it == ctxs.end()) ctxs.push_back({buft, ggml_init(wp)}), it = ctxs.end() - 1;
      weights.push_back(ggml_new_tensor_2d(it->second, type, s.in, s.out));
      if (s.count > 1) layers_in = ggml_backend_buft_name(buft);
    }
  ggml_free(probe);
  std::vector<ggml_backend_buffer_t> buffers;
  for (auto& [buft, ctx] : ctxs) buffers.push_back(ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft));
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  for (ggml_tensor* w : weights) {
    std::vector<float> values(w->ne[0] * w->ne[1]);
    for (float& v : values) v = normal(rng);
    std::vector<uint8_t> q(ggml_nbytes(w));
    ggml_quantize_chunk(type, values.data(), q.data(), 0, w->ne[1], w->ne[0], nullptr);
    ggml_backend_tensor_set(w, q.data(), 0, q.size());  // a repacking buffer repacks here
  }

  std::vector<int> ms;
  for (int m = 1; m <= max_rows; m *= 2) ms.push_back(m);
  std::vector<std::vector<double>> times(ms.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < ms.size(); ++i) {
      ggml_init_params gp = {ggml_tensor_overhead() * 256 + ggml_graph_overhead(), nullptr, true};
      ggml_context* g = ggml_init(gp);
      ggml_tensor* x768 = ggml_new_tensor_2d(g, GGML_TYPE_F32, 768, ms[i]);
      ggml_tensor* x2048 = ggml_new_tensor_2d(g, GGML_TYPE_F32, 2048, ms[i]);
      ggml_set_input(x768), ggml_set_input(x2048);
      ggml_cgraph* gf = ggml_new_graph(g);
      for (ggml_tensor* w : weights) {
        ggml_tensor* y = ggml_mul_mat(g, w, w->ne[0] == 768 ? x768 : x2048);
        ggml_set_output(y);
        ggml_build_forward_expand(gf, y);
      }
      ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(backend));
      ggml_gallocr_alloc_graph(galloc, gf);
      for (ggml_tensor* x : {x768, x2048}) {
        std::vector<float> v(x->ne[0] * x->ne[1]);
        for (float& e : v) e = normal(rng) * 50.0f;
        ggml_backend_tensor_set(x, v.data(), 0, ggml_nbytes(x));
      }
      ggml_backend_graph_compute(backend, gf);  // warm-up: caches and the threads' start
      const auto t0 = std::chrono::steady_clock::now();
      ggml_backend_graph_compute(backend, gf);
      times[i].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      ggml_gallocr_free(galloc);
      ggml_free(g);
    }
  for (size_t i = 0; i < ms.size(); ++i) {
    const auto [lo, hi] = std::minmax_element(times[i].begin(), times[i].end());
    std::printf("%-8s %3d  %8.3f  %8.3f-%-8.3f  %s\n", ggml_type_name(type), ms[i], median(times[i]), *lo, *hi, layers_in.c_str());
  }
  for (ggml_backend_buffer_t b : buffers) ggml_backend_buffer_free(b);
  for (auto& c : ctxs) ggml_free(c.second);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ggml_rows TYPE[,TYPE...] [threads 2] [rounds 7] [max rows 16]\n");
    return 2;
  }
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2, rounds = argc > 3 ? std::atoi(argv[3]) : 7;
  const int max_rows = argc > 4 ? std::atoi(argv[4]) : 16;
  ggml_log_set([](ggml_log_level level, const char* text, void*) { if (level >= GGML_LOG_LEVEL_WARN) std::fputs(text, stderr); },
               nullptr);  // not the repacking's line a tensor
  ggml_backend_load_all();
  ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  ggml_backend_t backend = ggml_backend_dev_init(dev, nullptr);
  ggml_backend_cpu_set_n_threads(backend, threads);
  std::vector<ggml_backend_buffer_type_t> extra;
  auto get_extra = reinterpret_cast<ggml_backend_dev_get_extra_bufts_t>(
      ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(dev), "ggml_backend_dev_get_extra_bufts"));
  for (ggml_backend_buffer_type_t* b = get_extra ? get_extra(dev) : nullptr; b && *b; ++b) extra.push_back(*b);
  std::printf("ggml %s, %d threads, %d rounds; type, M, median ms a forward, min-max, the layers' buffer\n",
              ggml_backend_dev_description(dev), threads, rounds);
  std::stringstream types(argv[1]);
  for (std::string t; std::getline(types, t, ',');) run_type(type_named(t), backend, dev, extra, rounds, max_rows);
  ggml_backend_free(backend);
  return 0;
}
