#include "model/int8_matmul.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "model/kernels/q8_kernel.h"
#include "model/kernels/kernel_threads.h"
#include "model/weight_tiles.h"

namespace exspec {
namespace {

// Rows converted to float32 at a time while quantising: a slice, never the whole weight.
constexpr int64_t kSliceRows = 256;

}  // namespace

struct Int8Weight::Impl {
  q8::Weight w;
};

Int8Weight::Int8Weight(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Int8Weight::~Int8Weight() = default;

std::shared_ptr<const Int8Weight> Int8Weight::quantise(const at::Tensor& weight) {
  if (weight.device().is_cpu() && weight.dim() == 2 && weight.scalar_type() == at::kByte) {
    TORCH_CHECK(weight.size(1) % q8::kQ8_0BlockBytes == 0, "Int8Weight: Q8_0 rows of ", weight.size(1),
                " bytes are not whole blocks");
    auto impl = std::make_unique<Impl>();
    const int64_t out = weight.size(0), in = weight.size(1) / q8::kQ8_0BlockBytes * q8::kBlock;
    impl->w = q8::empty_weight(out, in);
    const at::Tensor b = weight.contiguous();
    TORCH_CHECK(q8::pack_q8_0_rows_into(impl->w, b.data_ptr<uint8_t>(), 0, out),
                "Int8Weight: a Q8_0 quant is -128, outside the int8 kernels' range [-127, 127]");
    return std::shared_ptr<const Int8Weight>(new Int8Weight(std::move(impl)));
  }
  if (!weight.device().is_cpu() || weight.dim() != 2 || !at::isFloatingType(weight.scalar_type())) return nullptr;
  auto impl = std::make_unique<Impl>();
  const int64_t out = weight.size(0), in = weight.size(1);
  impl->w = q8::empty_weight(out, in);
  for (int64_t r0 = 0; r0 < out; r0 += kSliceRows) {
    const int64_t n = std::min(kSliceRows, out - r0);
    at::Tensor slice = weight.narrow(0, r0, n).to(at::kFloat).contiguous();
    const float* src = slice.data_ptr<float>();
    const int64_t first = r0 / q8::kTile, tiles = (n + q8::kTile - 1) / q8::kTile;  // slices start on a tile
    parallel_ranges(tiles, 1, [&](int64_t t0, int64_t t1) {
      const int64_t a = (first + t0) * q8::kTile, b = std::min(r0 + n, (first + t1) * q8::kTile);
      q8::quantise_rows_into(impl->w, src + (a - r0) * in, in, a, b);
    });
  }
  return std::shared_ptr<const Int8Weight>(new Int8Weight(std::move(impl)));
}

void quantise_rows(const float* x, int64_t ld, int64_t m, int64_t in, q8::Rows& out) {
  q8::resize_rows(out, m, in);
  // Each row is quantised alone, so splitting the rows over threads changes nothing in them.
  parallel_ranges(m, 16, [&](int64_t r0, int64_t r1) { q8::quantise_activations(x, ld, r0, r1, out); });
}

// x [M, in] float32 on the CPU, each row quantised alone, then the units split over the team.
at::Tensor Int8Matrix::multiply(const at::Tensor& x) const {
  check_rows(x, in_features(), at::kFloat, "Int8Matrix::multiply");
  const int64_t m = x.size(0), out = out_features();
  at::Tensor a = x.contiguous();
  at::Tensor y = at::empty({m, out}, a.options());
  if (m == 0) return y;
  // The caller's buffer, reused from call to call; the team reaches it through this reference
  // (inside the lambdas, the thread_local's name would mean each worker's own, empty one).
  thread_local q8::Rows buffer;
  q8::Rows& rows = buffer;
  quantise_rows(a.data_ptr<float>(), in_features(), m, in_features(), rows);
  float* dst = y.data_ptr<float>();
  parallel_ranges(units(), 1, [&](int64_t u0, int64_t u1) { multiply_units(rows, dst, out, u0, u1); });
  return y;
}

void multiply_jobs(const std::vector<Int8Job>& jobs) {
  std::vector<int64_t> first(jobs.size() + 1, 0);  // job j's units are [first[j], first[j + 1])
  for (size_t j = 0; j < jobs.size(); ++j) first[j + 1] = first[j] + (jobs[j].x->m > 0 ? jobs[j].weight->units() : 0);
  parallel_ranges(first.back(), 1, [&](int64_t u0, int64_t u1) {
    for (size_t j = 0; j < jobs.size(); ++j) {
      const int64_t a = std::max(u0, first[j]), b = std::min(u1, first[j + 1]);
      const Int8Matrix& w = *jobs[j].weight;
      if (a < b) w.multiply_units(*jobs[j].x, jobs[j].y, w.out_features(), a - first[j], b - first[j]);
    }
  });
}

at::Tensor dequantised_rows(const at::Tensor& ids, int64_t out, int64_t in, const char* what,
                            const std::function<void(int64_t, float*)>& row) {
  at::Tensor idx = ids.to(at::kCPU, at::kLong).contiguous().view({-1});
  at::Tensor y = at::empty({idx.size(0), in}, at::kFloat);
  const int64_t* id = idx.data_ptr<int64_t>();
  float* dst = y.data_ptr<float>();
  for (int64_t i = 0; i < idx.size(0); ++i) {
    TORCH_CHECK(id[i] >= 0 && id[i] < out, what, ": id ", id[i], " out of range [0, ", out, ")");
    row(id[i], dst + i * in);
  }
  return y;
}

at::Tensor Int8Weight::rows(const at::Tensor& ids) const {
  const q8::Weight& w = impl_->w;
  return dequantised_rows(ids, w.out, w.in, "Int8Weight::rows", [&](int64_t r, float* dst) { q8::dequantise_row(w, r, dst); });
}

at::Tensor int8_columns(const at::Tensor& x, const at::Tensor& cols, int64_t in, int64_t out, const char* what,
                        const std::function<void(const q8::Rows&, float*, int64_t)>& tile) {
  check_rows(x, in, at::kFloat, what);
  TORCH_CHECK(cols.dim() == 2 && cols.size(0) == x.size(0), what, ": expected [", x.size(0), ", N] columns");
  const at::Tensor a = x.contiguous(), c = cols.to(at::kCPU, at::kLong).contiguous();
  const int64_t m = a.size(0), n = c.size(1);
  at::Tensor y = at::empty({m, n}, at::kFloat);
  thread_local q8::Rows one;
  thread_local std::vector<float> line;  // one row's outputs; only the computed tiles are read
  line.resize(static_cast<size_t>(out));
  q8::resize_rows(one, 1, in);
  std::vector<int64_t> done;
  for (int64_t r = 0; r < m; ++r) {
    q8::quantise_activations(a.data_ptr<float>() + r * in, in, 0, 1, one);
    const int64_t* col = c.data_ptr<int64_t>() + r * n;
    done.clear();
    for (int64_t j = 0; j < n; ++j) {
      TORCH_CHECK(col[j] >= 0 && col[j] < out, what, ": column ", col[j], " out of range [0, ", out, ")");
      const int64_t t = col[j] / q8::kTile;
      if (std::find(done.begin(), done.end(), t) == done.end()) {
        tile(one, line.data(), t);
        done.push_back(t);
      }
      y.data_ptr<float>()[r * n + j] = line[static_cast<size_t>(col[j])];
    }
  }
  return y;
}

at::Tensor Int8Weight::columns(const at::Tensor& x, const at::Tensor& cols) const {
  const q8::Weight& w = impl_->w;
  const q8::Isa isa = q8::best_isa();
  return int8_columns(x, cols, w.in, w.out, "Int8Weight::columns",
                      [&](const q8::Rows& one, float* line, int64_t t) { q8::multiply(w, one, line, w.out, t, t + 1, isa); });
}

int64_t Int8Weight::units() const { return (impl_->w.tiles + q8::kGroup - 1) / q8::kGroup; }
void Int8Weight::multiply_units(const q8::Rows& x, float* y, int64_t ldy, int64_t u0, int64_t u1) const {
  const q8::Weight& w = impl_->w;
  q8::multiply(w, x, y, ldy, u0 * q8::kGroup, std::min(w.tiles, u1 * q8::kGroup), q8::best_isa());
}
int64_t Int8Weight::out_features() const { return impl_->w.out; }
int64_t Int8Weight::in_features() const { return impl_->w.in; }
int64_t Int8Weight::bytes() const { return impl_->w.bytes(); }

}  // namespace exspec
