// Times one decoder forward at several batch sizes and new-token counts over a cache of a given
// length: the cost curve that speculation trades on (verify rows vs draft steps), measured
// against the machine's physical floor for each shape:
//   floor = max(bytes the forward must read / measured read bandwidth, FLOPs / measured peak)
// Every (dtype, path) runs in the same process, so "plain" (at::linear everywhere, the code
// before packed weights) and "packed" are compared on the same machine minute.
//
//   decoder_bench MODEL_DIR [--threads N] [--blas-threads N] [--context C] [--dtypes float32,bfloat16,int8]
//                 [--paths plain,packed,onednn] [--batches 1,2,4,8,16,32] [--tokens 1,4,6] [--reps R]
//                 [--profile B,T] [--slots 1] [--between MB] [--interleave N] [--head-screen N]
// "onednn" is float32's and bfloat16's products on oneDNN (LoadOptions::onednn_bf16), as before
// the fixed-order kernels; int8 products always run on the int8 kernel (its "plain" path differs
// from "packed" in attention only).
// --slots 1 adds, for each packed row, the in-place forward (Decoder::forward_slots, issue 18) of
// the same shape: over B consecutive slots of a 2B-slot store (keys read as a view), and over
// every other slot (keys gathered with index_select), against the rectangular cache's forward;
// the first of them run again on a second thread ("thread"), as the engine's actors run it; and
// "paged": B consecutive slots whose blocks of 16 positions lie all over the store (each row's
// positions gathered, model/kv_store.h), what a row pays for blocks outside its slot's own row.
// --between MB reads MB megabytes of other memory before each timed forward (untimed), as the
// engine's draft forwards between two verify steps do with the draft's weights: the forward then
// finds the caches as a verify does, not as a forward repeated back to back does. --interleave N
// runs N one-token forwards of the same model (another cache) before each timed one, untimed.
// --head-screen N (int8): the head read in 4 bits, N candidates scored again (a draft's
// --draft-screen, model/screened_head.h).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bandwidth.h"
#include "bench/forward_case.h"
#include "bench/forward_profile.h"
#include "model/decoder.h"
#include "model/kernels/isa.h"
#include "model/linear.h"
#include "model/kv_store.h"
#include "model/onednn_matmul.h"
#include "model/runtime.h"

namespace {

using exspec::Decoder;

struct Options {
  std::string model;
  int threads = 2;
  int blas_threads = 0;  // 0: as many as --threads
  int64_t context = 128;
  std::vector<std::string> dtypes{"float32", "bfloat16"};
  std::vector<std::string> paths{"plain", "packed"};
  std::vector<int64_t> batches{1, 2, 4, 8, 16, 32};
  std::vector<int64_t> tokens{1, 4, 6};
  int reps = 7;
  int64_t profile_b = 0, profile_t = 0;
  bool slots = false;
  int64_t between_mb = 0, interleave = 0, head_screen = 0;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

std::vector<int64_t> split_ints(const std::string& s) {
  std::vector<int64_t> out;
  for (const auto& x : split(s)) out.push_back(std::stoll(x));
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) throw std::invalid_argument("usage: see the comment at the top of bench/decoder_bench.cpp");
  o.model = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--threads") o.threads = std::stoi(v);
    else if (k == "--blas-threads") o.blas_threads = std::stoi(v);
    else if (k == "--context") o.context = std::stoll(v);
    else if (k == "--dtypes") o.dtypes = split(v);
    else if (k == "--paths") o.paths = split(v);
    else if (k == "--batches") o.batches = split_ints(v);
    else if (k == "--tokens") o.tokens = split_ints(v);
    else if (k == "--reps") o.reps = std::stoi(v);
    else if (k == "--slots") o.slots = v == "1";
    else if (k == "--between") o.between_mb = std::stoll(v);
    else if (k == "--interleave") o.interleave = std::stoll(v);
    else if (k == "--head-screen") o.head_screen = std::stoll(v);
    else if (k == "--profile") {
      auto bt = split_ints(v);
      o.profile_b = bt.at(0), o.profile_t = bt.at(1);
    } else throw std::invalid_argument("unknown option " + k);
  }
  return o;
}

// Elements of the weights every new token is multiplied by: q/k/v, o, gate/up/down of every
// layer and the head (the embedding is only looked up).
double product_weights(const exspec::ModelConfig& c) {
  const double hd = c.head_dim, H = c.num_heads, Hkv = c.num_kv_heads, h = c.hidden_size;
  const double layer = h * (H + 2 * Hkv) * hd + H * hd * h + 3.0 * h * c.intermediate_size;
  return c.num_layers * layer + double(c.vocab_size) * h;
}

// Bytes a forward of B rows × T new tokens must read at least: the weights of its products once,
// as the model holds them (Decoder::product_bytes: Q8_0's scales, a K-quant's blocks, a
// shortlist's rows), and each row's cached keys and values (`elem` bytes each).
double forward_bytes(const exspec::Decoder& m, int64_t elem, int64_t B, int64_t T, int64_t ctx) {
  const exspec::ModelConfig& c = m.config();
  const double cache = double(B) * (ctx + T) * c.num_layers * 2 * c.num_kv_heads * c.head_dim;
  return double(m.product_bytes()) + cache * elem;
}

double forward_flops(const exspec::ModelConfig& c, int64_t B, int64_t T, int64_t ctx) {
  const double attention = 4.0 * B * T * (ctx + T) * c.num_heads * c.head_dim * c.num_layers;
  return 2.0 * B * T * product_weights(c) + attention;
}

// The best a large square product reaches here in this dtype: the compute yardstick.
double measured_peak_flops(at::ScalarType dtype) {
  const int64_t n = 2048;
  const bool int8 = dtype == at::kChar;
  exspec::Linear w(at::randn({n, n}).to(int8 ? at::kFloat : dtype), {},
                   int8 ? exspec::WeightPath::Int8 : exspec::WeightPath::Packed);
  at::Tensor x = at::randn({n, n}).to(int8 ? at::kFloat : dtype);
  double best = 1e9;
  for (int r = 0; r < 4; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    w(x);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * n * n * n / best;
}

struct Timing {
  double median = 0, lo = 0, hi = 0;
};

// Reads every cache line of `other` (the caches then hold it, not the model's weights).
void read_through(const std::vector<uint64_t>& other) {
  uint64_t sum = 0;
  for (size_t i = 0; i < other.size(); i += 8) sum += other[i];
  volatile uint64_t sink = sum;
  (void)sink;
}

Timing time_forward(const Decoder& m, int64_t b, int64_t t, int64_t ctx, int reps, const std::vector<uint64_t>& other,
                    int64_t interleave) {
  exspec::ForwardCase fc(m, b, t, ctx), one(m, 1, 1, ctx);
  std::vector<double> ms;
  for (int r = 0; r <= reps; ++r) {  // the first is a warm-up (kernels generated, memory touched)
    if (!other.empty()) read_through(other);
    for (int64_t i = 0; i < interleave; ++i) one.run();
    auto t0 = std::chrono::steady_clock::now();
    fc.run();
    if (r > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

// The in-place forward of the same shape: B rows in slots 0..B-1 (consecutive) or 0, 2, ...
// (scattered) of a 2B-slot store, each holding ctx positions (every run writes the same ones).
// paged: slots 0..B-1, each row's blocks taken from a shuffle of the whole store's.
enum class Layout { Consecutive, Scattered, Paged };
Timing time_slots(const Decoder& m, int64_t b, int64_t t, int64_t ctx, int reps, Layout layout) {
  constexpr int64_t kBlock = 16;
  exspec::KVStore store = m.new_store(2 * b, ctx + t, kBlock);
  std::vector<exspec::SlotSpan> rows;
  for (int64_t i = 0; i < b; ++i) rows.push_back({layout == Layout::Scattered ? 2 * i : i, ctx, t, {}});
  if (layout == Layout::Paged) {
    std::vector<int64_t> all(static_cast<size_t>(store.blocks()));
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i * 7919 % all.size());  // 7919: a prime
    const int64_t per_row = (ctx + t + kBlock - 1) / kBlock;
    for (int64_t i = 0; i < b; ++i) rows[i].blocks.assign(all.begin() + i * per_row, all.begin() + (i + 1) * per_row);
  }
  const at::Tensor ids = at::randint(m.config().vocab_size, {b, t}, at::kLong);
  std::vector<double> ms;
  for (int r = 0; r <= reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    m.forward_slots(ids, rows, store, Decoder::Logits::All);
    if (r > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  exspec::configure_threads(o.threads, o.blas_threads > 0 ? o.blas_threads : o.threads);
  exspec::check_blas();
  const exspec::BandwidthProbe probe(o.threads);
  std::vector<uint64_t> other(static_cast<size_t>(o.between_mb) * (1 << 20) / 8, 1);
  std::printf("model %s, threads %d, context %lld\noneDNN (path onednn): %s; kernels: %s\n"
              "floor: bytes / the read bandwidth probed just before each row (GB/s column), or FLOPs / peak\n",
              o.model.c_str(), o.threads, (long long)o.context, exspec::packed_matmul_support().c_str(),
              exspec::isa::describe().c_str());
  if (o.between_mb > 0) std::printf("between forwards: %lld MB of other memory read\n", (long long)o.between_mb);
  for (const auto& dname : o.dtypes) {
    const at::ScalarType dtype = exspec::parse_dtype(dname);
    const double peak = measured_peak_flops(dtype);
    std::printf("\n%s: measured peak %.0f GFLOP/s (a packed 2048^3 product)\n", dname.c_str(), peak / 1e9);
    std::printf("%-9s %-7s %5s %6s %11s %15s %6s %9s %8s %8s\n", "dtype", "path", "batch", "tokens", "ms/forward",
                "(min-max)", "GB/s", "floor ms", "x floor", "bound");
    for (const auto& path : o.paths) {
      exspec::LoadOptions lo{dtype, at::kCPU, path != "plain", path == "onednn"};
      lo.head_screen = o.head_screen;
      auto m = Decoder::load(o.model, lo);
      if (o.profile_b > 0) {
        exspec::print_forward_profile(*m, o.profile_b, o.profile_t, o.context, path);
        continue;
      }
      const int64_t elem = at::elementSize(m->dtype());
      for (int64_t b : o.batches)
        for (int64_t t : o.tokens) {
          const double gbs = probe.measure().best_gbs;
          const double mem = forward_bytes(*m, elem, b, t, o.context) / (gbs * 1e9) * 1e3;
          const double cmp = forward_flops(m->config(), b, t, o.context) / peak * 1e3;
          const double floor = std::max(mem, cmp);
          auto row = [&](const std::string& what, const Timing& tm) {
            std::printf("%-9s %-7s %5lld %6lld %11.2f %7.2f-%-7.2f %6.1f %9.2f %8.2f %8s\n", dname.c_str(), what.c_str(),
                        (long long)b, (long long)t, tm.median, tm.lo, tm.hi, gbs, floor, tm.median / floor,
                        mem >= cmp ? "memory" : "compute");
            std::fflush(stdout);
          };
          row(path, time_forward(*m, b, t, o.context, o.reps, other, o.interleave));
          if (o.slots && path == "packed") {
            row("slots", time_slots(*m, b, t, o.context, o.reps, Layout::Consecutive));
            // The same forward on a thread that is not the process's first, as the engine's
            // actors run it: libgomp throttles its workers' spinning once its threads outnumber
            // the cores, which a second thread's team does on 2 cores (docs/performance.md).
            Timing other{};
            std::thread([&] {
              exspec::apply_thread_settings();
              other = time_slots(*m, b, t, o.context, o.reps, Layout::Consecutive);
            }).join();
            row("thread", other);
            row("scatter", time_slots(*m, b, t, o.context, o.reps, Layout::Scattered));
            row("paged", time_slots(*m, b, t, o.context, o.reps, Layout::Paged));
          }
        }
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "decoder_bench: %s\n", e.what());
  return 1;
}
