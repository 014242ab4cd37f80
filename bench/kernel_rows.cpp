// What a verify step's rows cost the int8, bfloat16, float32 and K-quant kernels (q4_k_m: Q4_K layers, a Q6_K head): one "forward" of the 150M Llama
// shape's products (per layer q,k,v fused, o, gate and up fused, down; then the 32,000-row head)
// at M = 1..16 rows, against M = 1 and against the weight-read floor (the weights' bytes / the
// read bandwidth probed in the same run). Torch-free: the kernels alone, split over the threads
// as the seam splits them (model/int8_matmul.cpp). Weights are random: the time does not depend
// on their values.
//
//   build/kernel_rows [--threads 2] [--rounds 9] [--max-rows 16]
//                     [--dtypes int8,bfloat16,float32,q4_k_m,q4_k,q2_k,q3_k,q5_k,q6_k,q4_0,iq4_nl,iq4_xs,q4_1,q5_0,q5_1]
// q4_0, iq4_nl: every product in Q4_0 (IQ4_NL) blocks on the packed 4-bit kernel
// (model/kernels/q4_kernel.h); its products are int8's on the blocks' exact conversion, so int8
// is the path it replaces. iq4_xs, q4_1, q5_0, q5_1: those types' blocks on the same kernel
// (before it, Q5_0 was converted to Q8_0 blocks, the others' values quantised to them: int8
// again).
// EXSPEC_ISA=avx2 (or plain) times the paths a CPU of that level takes.
//
// Each round times every M once, in turn, so that the machine's drift reaches every M alike;
// the table gives each M's median over the rounds and its spread (min-max). For the tiled int8
// kernels each round also reads the same weights through the same split with plain loads,
// nothing computed: the pace a one-row stream could match on this machine's memory, beside the
// probe's (docs/performance.md, 2026-12-02).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/bandwidth.h"
#include "model/gguf/ggml_blocks.h"
#include "model/gguf/ggml_types.h"
#include "model/kernels/bf16_kernel.h"
#include "model/kernels/f32_kernel.h"
#include "model/kernels/kernel_threads.h"
#include "model/kernels/kquant_kernel.h"
#include "model/kernels/q4_kernel.h"
#include "model/kernels/q8_kernel.h"

using namespace exspec;

namespace {

struct Shape {
  int64_t out, in, times;
};
// 16 layers of the 150M preset (hidden 768, intermediate 2048, 12 heads, 4 kv heads of 64) and its head.
const std::vector<Shape> kShapes = {{1280, 768, 16}, {768, 768, 16}, {4096, 768, 16}, {768, 2048, 16}, {32000, 768, 1}};

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The bytes of a forward's weights, of any of the kernels' Weight types.
template <class W>
int64_t total_bytes(const std::vector<W>& w) {
  int64_t b = 0;
  for (const W& q : w) b += q.bytes();
  return b;
}

// One forward's products at m rows, for one dtype.
struct Model {
  virtual ~Model() = default;
  virtual double forward(int64_t m) = 0;  // seconds
  virtual int64_t bytes() const = 0;
  virtual const char* isa_name() const = 0;  // the instruction set its kernel runs on here
  virtual double read() { return -1; }       // seconds of a plain read of the weights (-1: none)
};

// The tiled int8 kernels' products (Q8_0 blocks, 4-bit blocks): a forward quantises each
// product's rows (q8_kernel.h), then splits its tiles over the threads in whole stored groups, as
// the seam does (model/int8_matmul.cpp).
template <class W>
struct Int8Model : Model {
  using Multiply = void (*)(const W&, const q8::Rows&, float*, int64_t, int64_t, int64_t, isa::Isa);
  std::vector<W> w;
  std::vector<float> x = random_floats(16 * 2048, 7), y = std::vector<float>(16 * 32000);
  q8::Rows rows;
  Multiply multiply;
  isa::Isa isa;
  // make(shape, seed): one product's weight.
  template <class Make>
  Int8Model(Multiply f, isa::Isa i, const Make& make) : multiply(f), isa(i) {
    for (const Shape& s : kShapes)
      for (int64_t k = 0; k < s.times; ++k) w.push_back(make(s, static_cast<uint32_t>(w.size() + 1)));
  }
  double forward(int64_t m) override {
    const auto t0 = std::chrono::steady_clock::now();
    for (const W& q : w) {
      q8::resize_rows(rows, m, q.in);
      parallel_ranges(m, 16, [&](int64_t r0, int64_t r1) { q8::quantise_activations(x.data(), q.in, r0, r1, rows); });
      parallel_ranges((q.tiles + q8::kGroup - 1) / q8::kGroup, 1, [&](int64_t g0, int64_t g1) {
        multiply(q, rows, y.data(), q.out, g0 * q8::kGroup, std::min(q.tiles, g1 * q8::kGroup), isa);
      });
    }
    return seconds_since(t0);
  }
  int64_t bytes() const override { return total_bytes(w); }
  const char* isa_name() const override { return q8::isa_name(isa); }  // the 4-bit kernel's are the Q8_0 kernel's
  // Every weight's stored groups read through the same split as forward's, nothing computed.
  double read() override {
    const auto t0 = std::chrono::steady_clock::now();
    static_assert(W::kGroupBlock % 8 == 0, "a group's bytes are whole words");
    for (const W& q : w) {
      const int64_t group_bytes = q.blocks * W::kGroupBlock;
      parallel_ranges((q.tiles + q8::kGroup - 1) / q8::kGroup, 1, [&](int64_t g0, int64_t g1) {
        const auto* words = reinterpret_cast<const uint64_t*>(q.data.data() + g0 * group_bytes);
        y[static_cast<size_t>(g0)] = static_cast<float>(sum_slice(words, (g1 - g0) * group_bytes / 8) & 1);
      });
    }
    return seconds_since(t0);
  }
};

q8::Weight q8_weight(const Shape& s, uint32_t seed) {
  const auto f = random_floats(static_cast<size_t>(s.out * s.in), seed);
  return q8::quantise(f.data(), s.out, s.in, s.in);
}

// `n` blocks of `bytes` each: `halves` float16s of 1.0 first (d; Q4_1's and Q5_1's m), the rest
// random (nibbles, 5th bits, IQ4_XS's 6-bit scales): the time does not depend on the values, only
// on the type's table (q4_kernel.h Packed::small).
std::vector<uint8_t> random_blocks(int64_t n, int64_t bytes, uint32_t seed, int halves = 1) {
  std::mt19937 g(seed);
  std::vector<uint8_t> blocks(static_cast<size_t>(n * bytes));
  for (size_t b = 0; b < blocks.size(); ++b) {
    const size_t at = b % bytes;
    blocks[b] = at < 2u * halves ? (at % 2 ? 0x3C : 0x00) : static_cast<uint8_t>(g());
  }
  return blocks;
}

// 4-bit blocks of 32 of a type whose nibbles stand for `values`.
template <const int8_t* Values>
q4::Weight q4_weight(const Shape& s, uint32_t seed) {
  q4::Weight w = q4::empty_weight(s.out, s.in, Values);
  q4::pack_rows_into(w, random_blocks(s.out * s.in / q4::kBlock, q4::kBlockBytes, seed).data(), 0, s.out);
  return w;
}

template <class W>
struct Form {
  using type = W;
};

// Type t's blocks in their packed form W (q4::empty_for's for t).
template <class W>
auto typed_weight(gguf::TensorType id) {
  return [id](const Shape& s, uint32_t seed) {
    const gguf::WeightType& t = gguf::row(id);
    const bool min = id == gguf::TensorType::Q4_1 || id == gguf::TensorType::Q5_1;
    q4::AnyWeight w = q4::empty_for(t, s.out, s.in);
    q4::pack_rows_into(w, random_blocks(s.out * s.in / t.block, t.block_bytes, seed, min ? 2 : 1).data(), 0, s.out);
    return std::get<W>(std::move(w));
  };
}

// The fixed-order float kernels, one traits struct each: their element, packing and product.
struct F32Kernel {
  using T = float;
  using Weight = f32::Weight;
  static constexpr int64_t kGroup = f32::kGroup;
  static T from(float f) { return f; }
  static Weight pack(const T* src, int64_t out, int64_t in) {
    Weight w = f32::empty_weight(out, in);
    f32::pack_rows_into(w, src, in, 0, out);
    return w;
  }
  static isa::Isa best() { return f32::best_isa(); }
  static const char* isa_name() { return isa::name(best(), isa::Family::F32); }
  static void multiply(const Weight& w, const T* x, int64_t m, T* y, int64_t t0, int64_t t1, isa::Isa isa) {
    f32::multiply(w, x, m, w.in, y, w.out, t0, t1, isa);
  }
};
struct Bf16Kernel {
  using T = uint16_t;
  using Weight = bf16::Weight;
  static constexpr int64_t kGroup = bf16::kGroup;
  static T from(float f) { return to_bf16(f); }
  static Weight pack(const T* src, int64_t out, int64_t in) { return bf16::pack(src, out, in, in); }
  static isa::Isa best() { return bf16::best_isa(); }
  static const char* isa_name() { return bf16::isa_name(best()); }
  static void multiply(const Weight& w, const T* x, int64_t m, T* y, int64_t t0, int64_t t1, isa::Isa isa) {
    bf16::multiply(w, x, m, w.in, y, w.out, t0, t1, isa);
  }
};

template <class K>
struct FloatModel : Model {
  std::vector<typename K::Weight> w;
  std::vector<typename K::T> x, y;
  FloatModel() {
    for (const Shape& s : kShapes)
      for (int64_t i = 0; i < s.times; ++i) {
        const auto f = random_floats(static_cast<size_t>(s.out * s.in), static_cast<uint32_t>(w.size() + 1));
        std::vector<typename K::T> h(f.size());
        std::transform(f.begin(), f.end(), h.begin(), K::from);
        w.push_back(K::pack(h.data(), s.out, s.in));
      }
    const auto f = random_floats(16 * 2048, 7);
    x.resize(f.size());
    std::transform(f.begin(), f.end(), x.begin(), K::from);
    y.resize(16 * 32000);
  }
  double forward(int64_t m) override {
    const auto t0 = std::chrono::steady_clock::now();
    const isa::Isa isa = K::best();
    for (const auto& q : w)
      parallel_ranges((q.tiles + K::kGroup - 1) / K::kGroup, 1, [&](int64_t g0, int64_t g1) {
        K::multiply(q, x.data(), m, y.data(), g0 * K::kGroup, std::min(q.tiles, g1 * K::kGroup), isa);
      });
    return seconds_since(t0);
  }
  int64_t bytes() const override { return total_bytes(w); }
  const char* isa_name() const override { return K::isa_name(); }
};

// A Q4_K_M file's types: the layers' products in Q4_K, the head in Q6_K (llama-quantize's
// choice for output.weight), or (q4_k, q2_k, q3_k, q5_k, q6_k) every product in one type. Random
// blocks with float16 scales of 1.0: the time does not depend on the values.
struct KQuantModel : Model {
  std::vector<kq::Weight> w;
  std::vector<float> x, y;
  q8::Rows rows;
  KQuantModel(uint8_t layer_type, uint8_t head_type) {
    std::mt19937 g(11);
    for (const Shape& s : kShapes)
      for (int64_t i = 0; i < s.times; ++i) {
        const uint8_t type = s.out == 32000 ? head_type : layer_type;
        const int64_t width = kq::tagged_width(s.in), bb = kq::block_bytes(type);
        std::vector<uint8_t> tagged(static_cast<size_t>(s.out * width), 0);
        for (int64_t r = 0; r < s.out; ++r) {
          uint8_t* row = tagged.data() + r * width;
          row[0] = type;
          for (int64_t b = 1; b <= s.in / kq::kSuper * bb; ++b) row[b] = static_cast<uint8_t>(g());
          for (int64_t sb = 0; sb < s.in / kq::kSuper; ++sb) {  // d (and dmin) = 1.0 as float16
            uint8_t* blk = row + 1 + sb * bb;
            for (const int64_t at : {kq::d_offset(type), kq::dmin_offset(type)})
              if (at >= 0) blk[at] = 0x00, blk[at + 1] = 0x3C;
          }
        }
        w.push_back(kq::from_tagged(tagged.data(), s.out, s.in));
      }
    x = random_floats(16 * 2048, 7);
    y.resize(16 * 32000);
  }
  double forward(int64_t m) override {
    const auto t0 = std::chrono::steady_clock::now();
    const kq::Isa isa = kq::best_isa();
    for (const kq::Weight& q : w) {
      q8::resize_rows(rows, m, q.in);
      parallel_ranges(m, 16, [&](int64_t r0, int64_t r1) { q8::quantise_activations(x.data(), q.in, r0, r1, rows); });
      parallel_ranges(q.out, 16, [&](int64_t c0, int64_t c1) { kq::multiply(q, rows, y.data(), q.out, c0, c1, isa); });
    }
    return seconds_since(t0);
  }
  int64_t bytes() const override { return total_bytes(w); }
  const char* isa_name() const override { return kq::isa_name(kq::best_isa()); }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run(const std::string& dtype, Model& model, int rounds, int max_rows, const BandwidthProbe& probe) {
  for (int64_t m = 1; m <= max_rows; ++m) model.forward(m);  // warm-up: pages, caches
  std::vector<std::vector<double>> t(static_cast<size_t>(max_rows + 1));
  std::vector<double> gbs, reads;
  for (int r = 0; r < rounds; ++r) {
    gbs.push_back(probe.measure(1).best_gbs);
    if (const double s = model.read(); s >= 0) reads.push_back(s * 1e3);
    for (int64_t m = 1; m <= max_rows; ++m) t[m].push_back(model.forward(m) * 1e3);
  }
  const double bw = median(gbs), floor_ms = static_cast<double>(model.bytes()) / (bw * 1e9) * 1e3;
  const double one = median(t[1]);
  std::printf("\n%s: %.1f MB of weights, probe %.1f GB/s (median of %d, %.1f-%.1f), floor %.2f ms, isa %s\n",
              dtype.c_str(), model.bytes() / 1e6, bw, rounds, *std::min_element(gbs.begin(), gbs.end()),
              *std::max_element(gbs.begin(), gbs.end()), floor_ms, model.isa_name());
  if (!reads.empty())
    std::printf("a plain read of the same bytes on the same split: %.2f ms (%.2f-%.2f), %.1f GB/s; M=1 / read %.2f\n", median(reads),
                *std::min_element(reads.begin(), reads.end()), *std::max_element(reads.begin(), reads.end()),
                model.bytes() / (median(reads) * 1e6), one / median(reads));
  std::printf("| M | ms (median) | min-max | / M=1 | / floor |\n|--:|--:|--:|--:|--:|\n");
  for (int64_t m = 1; m <= max_rows; ++m) {
    const double med = median(t[m]);
    std::printf("| %ld | %.2f | %.2f-%.2f | %.2f | %.2f |\n", static_cast<long>(m), med,
                *std::min_element(t[m].begin(), t[m].end()), *std::max_element(t[m].begin(), t[m].end()), med / one,
                med / floor_ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, rounds = 9, max_rows = 16;
  std::string dtypes = "int8,bfloat16";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--threads") threads = std::stoi(v);
    else if (a == "--rounds") rounds = std::stoi(v);
    else if (a == "--max-rows") max_rows = std::min(16, std::stoi(v));
    else if (a == "--dtypes") dtypes = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  omp_set_num_threads(threads);
  const BandwidthProbe probe(threads);
  if (dtypes.find("int8") != std::string::npos) {
    Int8Model<q8::Weight> m(q8::multiply, q8::best_isa(), q8_weight);
    run("int8", m, rounds, max_rows, probe);
  }
  if (dtypes.find("q4_k_m") != std::string::npos) {
    KQuantModel m(kq::kQ4_K, kq::kQ6_K);
    run("q4_k_m", m, rounds, max_rows, probe);
  }
  if (dtypes.find("q4_k,") != std::string::npos || dtypes.size() >= 4 && dtypes.compare(dtypes.size() - 4, 4, "q4_k") == 0) {
    KQuantModel m(kq::kQ4_K, kq::kQ4_K);  // the head in Q4_K too: the Q4_K path alone
    run("q4_k", m, rounds, max_rows, probe);
  }
  // Every product in one of the other K types (q6_k: what Q3_K was read as before its own path).
  for (auto [name, type] : {std::pair<const char*, uint8_t>{"q2_k", kq::kQ2_K}, {"q3_k", kq::kQ3_K}, {"q5_k", kq::kQ5_K},
                            {"q6_k", kq::kQ6_K}}) {
    if (("," + dtypes + ",").find(std::string(",") + name + ",") == std::string::npos) continue;
    KQuantModel m(type, type);
    run(name, m, rounds, max_rows, probe);
  }
  if (dtypes.find("q4_0") != std::string::npos) {
    Int8Model<q4::Weight> m(q4::multiply, q4::best_isa(), q4_weight<gguf::blocks::kQ4_0Values>);
    run("q4_0", m, rounds, max_rows, probe);
  }
  if (dtypes.find("iq4_nl") != std::string::npos) {
    Int8Model<q4::Weight> m(q4::multiply, q4::best_isa(), q4_weight<gguf::blocks::kIq4nlValues>);
    run("iq4_nl", m, rounds, max_rows, probe);
  }
  // The 4-bit kernel's other forms (q4_kernel.h): each type's blocks as the form empty_for gives.
  auto packed = [&](const char* name, gguf::TensorType id, auto form) {
    using W = typename decltype(form)::type;
    if (dtypes.find(name) == std::string::npos) return;
    Int8Model<W> m(q4::multiply, q4::best_isa(), typed_weight<W>(id));
    run(name, m, rounds, max_rows, probe);
  };
  packed("iq4_xs", gguf::TensorType::IQ4_XS, Form<q4::XsWeight>{});
  packed("q4_1", gguf::TensorType::Q4_1, Form<q4::Q4_1Weight>{});
  packed("q5_0", gguf::TensorType::Q5_0, Form<q4::Q5_0Weight>{});
  packed("q5_1", gguf::TensorType::Q5_1, Form<q4::Q5_1Weight>{});
  if (dtypes.find("bfloat16") != std::string::npos) {
    FloatModel<Bf16Kernel> m;
    run("bfloat16", m, rounds, max_rows, probe);
  }
  if (dtypes.find("float32") != std::string::npos) {
    FloatModel<F32Kernel> m;
    run("float32", m, rounds, max_rows, probe);
  }
  return 0;
}
