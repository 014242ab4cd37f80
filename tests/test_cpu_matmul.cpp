// The CPU matrix products against plain libtorch: the packed weight product (our fixed-order
// kernels, and oneDNN's for the benchmarks, model/onednn_matmul.h), and the whole decoder with
// packed weights (logits within the dtype's tolerance, greedy ids identical in float32).
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cstdlib>
#include <string>

#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/oracle/plain_decode.h"
#include "model/linear.h"
#include "model/kernels/isa.h"
#include "model/onednn_matmul.h"
#include "tests/support.h"

using namespace exspec;

namespace {

// Relative to the largest reference magnitude: a product's rounding grows with its values.
double rel_diff(const at::Tensor& got, const at::Tensor& want) {
  at::Tensor w = want.to(at::kDouble), g = got.to(at::kDouble);
  return ((g - w).abs().max() / w.abs().max().clamp_min(1e-30)).item<double>();
}

}  // namespace

CATCH_TEST_CASE("packed linear equals at::linear within the dtype's rounding", "[cpu_matmul]") {
  at::manual_seed(3);
  for (at::ScalarType dt : {at::kFloat, at::kBFloat16}) {
    const double tol = dt == at::kFloat ? 1e-5 : 2e-2;
    for (bool bias : {false, true}) {
      at::Tensor w = at::randn({300, 96}).to(dt), b = bias ? at::randn({300}).to(dt) : at::Tensor();
      Linear packed(w, b, WeightPath::Packed), plain(w, b, WeightPath::Plain);
      CATCH_CHECK_FALSE(plain.packed());
      CATCH_CHECK(packed.packed());  // on every CPU: the fixed-order kernels have a plain path
      CATCH_CHECK(packed.numel() == plain.numel());
      for (int64_t m : {1, 2, 3, 8, 33, 257}) {
        at::Tensor x = at::randn({m, 96}).to(dt);
        // The float64 product of the same (rounded) inputs is the reference for both.
        at::Tensor want = at::linear(x.to(at::kDouble), w.to(at::kDouble), bias ? b.to(at::kDouble) : at::Tensor());
        at::Tensor got = packed(x);
        CATCH_CHECK(got.scalar_type() == dt);
        CATCH_CHECK(got.sizes() == want.sizes());
        CATCH_CHECK(rel_diff(got, want) < tol);
        CATCH_CHECK(rel_diff(plain(x), want) < tol);
      }
      // Leading dimensions and a non-contiguous input, as the decoder passes them.
      at::Tensor x3 = at::randn({2, 96, 5}).to(dt).transpose(1, 2);
      CATCH_CHECK(packed(x3).sizes() == at::IntArrayRef({2, 5, 300}));
      CATCH_CHECK(rel_diff(packed(x3), plain(x3).to(at::kDouble)) < 2 * tol);
    }
  }
}

// A tied embedding is looked up in its head's packed copy (issue 51: the model holds it once):
// copied out of oneDNN's blocked layout or our kernels' tiles, every row must be the weight's row, bit for bit.
CATCH_TEST_CASE("rows read from a packed weight are the weight's rows", "[cpu_matmul][memory]") {
  at::manual_seed(5);
  for (at::ScalarType dt : {at::kFloat, at::kBFloat16}) {
    for (auto [out, in] : std::vector<std::pair<int64_t, int64_t>>{{4096, 384}, {300, 96}, {100, 37}, {7, 5}, {1, 64}}) {
      CATCH_CAPTURE(c10::toString(dt), out, in);
      at::Tensor w = at::randn({out, in}).to(dt);
      Linear packed(w, {}, WeightPath::OneDnn), plain(w, {}, WeightPath::Plain), own(w, {}, WeightPath::Packed);
      at::Tensor all = at::arange(out, at::kLong), some = at::tensor(std::vector<int64_t>{out - 1, 0, out / 2, 0}, at::kLong);
      for (const at::Tensor& ids : {all, some}) {
        CATCH_CHECK(at::equal(packed.rows(ids), w.index_select(0, ids)));
        CATCH_CHECK(at::equal(plain.rows(ids), w.index_select(0, ids)));
        CATCH_CHECK(at::equal(own.rows(ids), w.index_select(0, ids)));  // the fixed-order kernels' tiles
      }
      if (packed.packed()) CATCH_CHECK_THROWS(packed.rows(at::tensor(std::vector<int64_t>{out}, at::kLong)));
      CATCH_CHECK_THROWS(own.rows(at::tensor(std::vector<int64_t>{out}, at::kLong)));
    }
  }
}

// Issue 49: a primitive made for every row count a product met, kept forever, grew a server's
// resident memory with the requests it answered. The cache holds a bounded number.
CATCH_TEST_CASE("the packed products keep a bounded number of primitives, whatever the row counts", "[cpu_matmul][memory]") {
  at::Tensor w = at::randn({48, 32});
  Linear packed(w, {}, WeightPath::OneDnn);
  if (!packed.packed()) return;  // no oneDNN here: nothing is kept
  const int64_t capacity = packed_plan_stats().capacity;
  CATCH_REQUIRE(capacity > 0);
  for (int64_t m = 1; m <= capacity + 50; ++m) {
    at::Tensor x = at::randn({m, 32});
    CATCH_CHECK(at::allclose(packed(x), at::linear(x, w), 1e-4, 1e-5));
  }
  const PackedPlanStats s = packed_plan_stats();
  CATCH_CHECK(s.held <= s.capacity);
  at::Tensor x = at::randn({capacity + 50, 32});  // the last one used is still held: no new one
  const int64_t misses = s.misses;
  packed(x);
  CATCH_CHECK(packed_plan_stats().misses == misses);
}

CATCH_TEST_CASE("decoder with packed weights: logits within float32 rounding, greedy ids identical", "[cpu_matmul]") {
  for (const char* arch : {"llama", "qwen2", "qwen3", "glm", "glm4", "mistral", "phi3", "gemma2", "gemma3", "qwen3moe"}) {
    CATCH_SECTION(arch) {
      const std::string dir = test::model_dir(arch, "small", 5);
      auto packed = Decoder::load(dir, {at::kFloat, at::kCPU, true});
      auto plain = Decoder::load(dir, {at::kFloat, at::kCPU, false});
      auto ref = Decoder::load(dir, {at::kDouble, at::kCPU, false});
      CATCH_CHECK(packed->packed_weights());
      CATCH_CHECK_FALSE(plain->packed_weights());
      CATCH_CHECK(packed->num_parameters() == ref->num_parameters());
      auto prompts = test::mixed_prompts(4, 3, 30, packed->config().vocab_size, 9);
      for (const auto& p : prompts) {
        const int64_t T = static_cast<int64_t>(p.size());
        auto logits = [&](const Decoder& m) {
          KVCache c = new_dense_cache(m, 1);
          return dense_forward(m, at::tensor(p, at::kLong).view({1, T}), at::arange(T, at::kLong).view({1, T}),
                               at::ones({1, T}, at::kLong), c);
        };
        CATCH_CHECK(rel_diff(logits(*packed), logits(*ref)) < 1e-4);
        SeqRequest r;
        r.prompt = p, r.max_tokens = 24;
        const auto want = plain_decode(*plain, {r})[0].tokens;
        CATCH_CHECK(want.size() == 24);
        CATCH_CHECK(plain_decode(*packed, {r})[0].tokens == want);
      }
    }
  }
}

// Issue 69: EXSPEC_ISA caps every kernel family and, through isa::cap_libraries() (run before
// main by tests/support.cpp, as by the executable), libtorch's own dispatch: the capped runs of
// the invariance tests compute what a CPU of that level computes. libtorch 1.13 exports no
// reading of its capability, so the variable it reads at its first dispatch is checked.
CATCH_TEST_CASE("the instruction-set cap reaches every kernel family and libtorch's dispatch", "[cpu_matmul]") {
  const isa::Isa cap = isa::cap();
  for (isa::Family f : {isa::Family::F32, isa::Family::Bf16, isa::Family::Int8, isa::Family::Int8Vl}) {
    CATCH_CHECK(static_cast<int>(isa::best(f)) <= static_cast<int>(cap));
    CATCH_CHECK(isa::here(f).front() == isa::Isa::Plain);
  }
  const char* aten = std::getenv("ATEN_CPU_CAPABILITY");
  if (cap == isa::Isa::Plain) CATCH_CHECK((aten && std::string(aten) == "default"));
  if (cap == isa::Isa::Avx2) CATCH_CHECK((aten && std::string(aten) == "avx2"));
  CATCH_CHECK(isa::describe().find(cap == isa::Isa::Avx512 ? "float32 " : "EXSPEC_ISA=") != std::string::npos);
}
