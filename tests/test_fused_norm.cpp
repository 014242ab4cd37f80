// model/fused_ops.h's RMSNorm with one weight a head: Qwen3's and Gemma 3's q and k norms run in
// one pass over the H + Hkv heads of q and k (a [heads, D] weight), as the fused kernel, instead of
// libtorch's five operators a layer.
#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include "model/fused_ops.h"

using namespace exspec;

CATCH_TEST_CASE("fused RMSNorm with a weight a head: each head as the one-weight norm with its row, near float64",
                "[fused_norm]") {
  at::manual_seed(3);
  for (at::ScalarType t : {at::kFloat, at::kBFloat16}) {
    CATCH_INFO(c10::toString(t));
    const int64_t heads = 5, D = 24;
    // q and k side by side inside a wider row, as the decoder narrows them out of its qkv product.
    const at::Tensor qkv = at::randn({3, 2, (heads + 2) * D}).to(t);
    const at::Tensor x = qkv.narrow(-1, 0, heads * D).view({3, 2, heads, D});
    const at::Tensor w = (at::rand({heads, D}) + 0.5).to(t);
    const at::Tensor y = fused_rms_norm(x, w, 1e-6);
    CATCH_REQUIRE(y.defined());
    CATCH_REQUIRE(y.sizes() == x.sizes());
    for (int64_t h = 0; h < heads; ++h) {
      const at::Tensor one = fused_rms_norm(x.select(2, h), w[h], 1e-6);
      CATCH_REQUIRE(one.defined());
      CATCH_CHECK(at::equal(y.select(2, h), one));
    }
    // HF's Qwen3RMSNorm in float64.
    const at::Tensor xd = x.to(at::kDouble);
    const at::Tensor want = w.to(at::kDouble) * (xd * at::rsqrt(xd.pow(2).mean(-1, true) + 1e-6));
    const double tol = t == at::kFloat ? 1e-5 : 2e-2;
    CATCH_CHECK(at::allclose(y.to(at::kDouble), want, tol, tol));
  }
}

CATCH_TEST_CASE("fused RMSNorm declines a weight that is neither one row nor one a head", "[fused_norm]") {
  const at::Tensor x = at::randn({2, 4, 8});
  CATCH_CHECK_FALSE(fused_rms_norm(x, at::ones({3, 8}), 1e-6).defined());
  CATCH_CHECK_FALSE(fused_rms_norm(x, at::ones({4, 8}, at::kDouble), 1e-6).defined());
  CATCH_CHECK(fused_rms_norm(x, at::ones({4, 8}), 1e-6).defined());
  CATCH_CHECK(fused_rms_norm(x, at::ones({8}), 1e-6).defined());
}
