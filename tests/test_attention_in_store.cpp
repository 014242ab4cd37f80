// attention_in_store (model/attention.h): the in-place CPU step's attention straight over the
// store gives the bits of write_read's views through attention(), stores the same keys and
// values, and declines (storing nothing) wherever its layout does not apply.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <vector>

#include "model/attention.h"
#include "model/kv_store.h"

namespace exspec {
namespace {

constexpr int64_t kH = 6, kHkv = 2, kD = 32, kLayers = 2;
constexpr double kScale = 0.17677669529663687;  // 32^-0.5

KVStore make_store(at::ScalarType dt, int64_t block_size = 0) {
  return KVStore(kLayers, 4, kHkv, kD, 64, dt, at::kCPU, block_size);
}

// The reference: write_read's views, then attention() on its own kernel (onednn = true).
at::Tensor through_views(KVStore& store, const SlotForward& f, int64_t layer, const at::Tensor& qk, const at::Tensor& v,
                         const at::Tensor& blocked, double softcap) {
  const int64_t B = qk.size(0), T = qk.size(1);
  auto [keys, values] = store.write_read(layer, f, qk.narrow(2, kH, kHkv), v);
  return attention(qk.narrow(2, 0, kH).transpose(1, 2), keys, values, blocked, kScale, true, softcap)
      .transpose(1, 2)
      .reshape({B * T, kH * kD});
}

// Both stores fed the same earlier forwards (prefill of every row), then one step of `rows`.
void compare(at::ScalarType dt, const std::vector<SlotSpan>& rows, int64_t T, double softcap) {
  KVStore direct = make_store(dt), views = make_store(dt);
  at::manual_seed(11);
  for (const SlotSpan& r : rows) {  // each row's earlier positions, written alike into both
    if (r.start == 0) continue;
    const SlotForward f = direct.plan({{r.slot, 0, r.start, {}}}, r.start);
    for (int64_t l = 0; l < kLayers; ++l) {
      const at::Tensor k = at::randn({1, r.start, kHkv, kD}).to(dt), v = at::randn({1, r.start, kHkv, kD}).to(dt);
      direct.write_read(l, f, k, v);
      views.write_read(l, f, k, v);
    }
  }
  const SlotForward f = direct.plan(rows, T);
  const int64_t B = static_cast<int64_t>(rows.size());
  for (int64_t l = 0; l < kLayers; ++l) {
    // qk as the decoder has it: a rope's output [B, T, H + Hkv, D]; v a view into the qkv rows.
    const at::Tensor qk = at::randn({B, T, kH + kHkv, kD}).to(dt);
    const at::Tensor qkv = at::randn({B, T, (kH + 2 * kHkv) * kD}).to(dt);
    const at::Tensor v = qkv.narrow(-1, (kH + kHkv) * kD, kHkv * kD).view({B, T, kHkv, kD});
    const at::Tensor got = attention_in_store(direct, f, l, qk, v, kH, f.blocked, kScale, softcap);
    CATCH_REQUIRE(got.defined());
    const at::Tensor want = through_views(views, f, l, qk, v, f.blocked, softcap);
    CATCH_CHECK(at::equal(got, want));
  }
  for (const SlotSpan& r : rows)
    for (int64_t l = 0; l < kLayers; ++l) {
      CATCH_CHECK(at::equal(direct.keys(l, r.slot, r.start + T), views.keys(l, r.slot, r.start + T)));
      CATCH_CHECK(at::equal(direct.values(l, r.slot, r.start + T), views.values(l, r.slot, r.start + T)));
    }
}

}  // namespace

CATCH_TEST_CASE("attention straight over the store equals attention over write_read's views, bit for bit",
                "[attention_in_store]") {
  for (at::ScalarType dt : {at::kFloat, at::kBFloat16}) {
    CATCH_INFO(c10::toString(dt));
    CATCH_SECTION("one decode token, rows ending together (no mask)") {
      compare(dt, {{1, 9, 1, {}}, {2, 9, 1, {}}}, 1, 0);
    }
    CATCH_SECTION("one decode token, rows of other lengths (a mask)") {
      compare(dt, {{0, 5, 1, {}}, {1, 17, 1, {}}, {2, 3, 1, {}}}, 1, 0);
    }
    CATCH_SECTION("a verification of 4 tokens a row, causal mask, soft-capping") {
      compare(dt, {{2, 7, 4, {}}, {3, 12, 4, {}}}, 4, 30.0);
    }
    CATCH_SECTION("a first chunk (nothing stored before)") { compare(dt, {{0, 0, 6, {}}}, 6, 0); }
  }
}

CATCH_TEST_CASE("attention straight over the store declines, storing nothing, where its layout does not apply",
                "[attention_in_store]") {
  auto declines = [](KVStore& store, const std::vector<SlotSpan>& rows, int64_t T, at::ScalarType dt) {
    const SlotForward f = store.plan(rows, T);
    const int64_t B = static_cast<int64_t>(rows.size());
    const at::Tensor before = store.keys(0, rows[0].slot, rows[0].start + rows[0].count, rows[0].blocks).clone();
    const at::Tensor qk = at::ones({B, T, kH + kHkv, kD}, dt), v = at::ones({B, T, kHkv, kD}, dt);
    const bool defined = attention_in_store(store, f, 0, qk, v, kH, f.blocked, kScale, 0).defined();
    CATCH_CHECK(at::equal(before, store.keys(0, rows[0].slot, rows[0].start + rows[0].count, rows[0].blocks)));
    return !defined;
  };
  KVStore store = make_store(at::kFloat, 16);
  CATCH_CHECK(declines(store, {{0, 0, 1, {}}, {2, 0, 1, {}}}, 1, at::kFloat));  // slots not consecutive: read by rows
  CATCH_CHECK(declines(store, {{0, 0, 2, {}}, {1, 0, 1, {}}}, 2, at::kFloat));  // a padded row
  CATCH_CHECK(declines(store, {{0, 0, 1, {5}}}, 1, at::kFloat));               // a block of another row: a gather
  KVStore doubles = make_store(at::kDouble);
  CATCH_CHECK(declines(doubles, {{0, 0, 1, {}}}, 1, at::kDouble));  // float64: attention() runs at::matmul
  // and it does apply to the plain case of the same store
  const SlotForward f = store.plan({{1, 0, 1, {}}}, 1);
  CATCH_CHECK(attention_in_store(store, f, 0, at::ones({1, 1, kH + kHkv, kD}), at::ones({1, 1, kHkv, kD}), kH, f.blocked,
                                 kScale, 0)
                  .defined());
}

}  // namespace exspec
