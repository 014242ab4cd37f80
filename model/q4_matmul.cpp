#include "model/q4_matmul.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <string>

#include "model/gguf/ggml_types.h"
#include "model/int8_matmul.h"
#include "model/kernels/q4_kernel.h"

namespace exspec {

// The form of the type's blocks (q4_kernel.h): one kernel, stored by any.
struct Q4Weight::Impl {
  q4::AnyWeight w;
  template <class F>
  decltype(auto) visit(F&& f) const { return std::visit(std::forward<F>(f), w); }
};

Q4Weight::Q4Weight(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Q4Weight::~Q4Weight() = default;

std::shared_ptr<const Q4Weight> Q4Weight::from_tagged(const at::Tensor& weight) {
  TORCH_CHECK(weight.device().is_cpu() && weight.dim() == 3 && weight.size(1) == 1 && weight.scalar_type() == at::kByte,
              "Q4Weight: expected tagged rows, uint8 [out, 1, width]");
  const at::Tensor b = weight.contiguous();
  const uint8_t* data = b.data_ptr<uint8_t>();
  const gguf::WeightType* type = b.size(2) > 0 ? gguf::weight_type(data[0]) : nullptr;
  TORCH_CHECK(type && type->int8 == gguf::Int8Path::Q4, "Q4Weight: type ", gguf::type_name(b.size(2) > 0 ? data[0] : 0),
              " is not a 4-bit type of the packed 4-bit kernel");
  const int64_t out = b.size(0), width = b.size(2), in = (width - 1) / type->block_bytes * type->block;
  TORCH_CHECK(out > 0 && 1 + in / type->block * type->block_bytes == width, "Q4Weight: tagged rows of ", width, " bytes");
  auto impl = std::make_unique<Impl>();
  impl->w = q4::empty_for(*type, out, in);  // one type, so one table of values, a weight
  for (int64_t r = 0; r < out; ++r) {
    TORCH_CHECK(data[r * width] == data[0], "Q4Weight: row ", r, " has type ", gguf::type_name(data[r * width]), ", row 0 ",
                type->name, ": one type a weight");
    q4::pack_rows_into(impl->w, data + r * width + 1, r, r + 1);
  }
  return std::shared_ptr<const Q4Weight>(new Q4Weight(std::move(impl)));
}

at::Tensor Q4Weight::rows(const at::Tensor& ids) const {
  return impl_->visit([&](const auto& w) {
    return dequantised_rows(ids, w.out, w.in, "Q4Weight::rows", [&](int64_t r, float* dst) { q4::dequantise_row(w, r, dst); });
  });
}

at::Tensor Q4Weight::columns(const at::Tensor& x, const at::Tensor& cols) const {
  const q4::Isa isa = q4::best_isa();
  return impl_->visit([&](const auto& w) {
    return int8_columns(x, cols, w.in, w.out, "Q4Weight::columns",
                        [&](const q8::Rows& one, float* line, int64_t t) { q4::multiply(w, one, line, w.out, t, t + 1, isa); });
  });
}

int64_t Q4Weight::units() const {
  return impl_->visit([](const auto& w) { return (w.tiles + q4::kGroup - 1) / q4::kGroup; });
}
void Q4Weight::multiply_units(const q8::Rows& x, float* y, int64_t ldy, int64_t u0, int64_t u1) const {
  impl_->visit([&](const auto& w) { q4::multiply(w, x, y, ldy, u0 * q4::kGroup, std::min(w.tiles, u1 * q4::kGroup), q4::best_isa()); });
}
int64_t Q4Weight::out_features() const { return impl_->visit([](const auto& w) { return w.out; }); }
int64_t Q4Weight::in_features() const { return impl_->visit([](const auto& w) { return w.in; }); }
int64_t Q4Weight::bytes() const { return impl_->visit([](const auto& w) { return w.bytes(); }); }

}  // namespace exspec
