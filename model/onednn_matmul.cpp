#include "model/onednn_matmul.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <stdexcept>

#ifdef EXSPEC_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <tuple>
#include <vector>

#include "model/lru_cache.h"

namespace exspec {
namespace {

using dnnl::memory;

// The products' primitives kept at once (see plan_for).
constexpr size_t kPlans = 256;

dnnl::engine& cpu_engine() {
  static dnnl::engine e = [] {
    // oneDNN keeps a cache of its own (1024 primitives by default), which would hold on to the
    // primitives plan_for lets go: it keeps as many as plan_for does, unless the user sized it.
    if (!std::getenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY") && !std::getenv("DNNL_PRIMITIVE_CACHE_CAPACITY"))
      dnnl::set_primitive_cache_capacity(static_cast<int>(kPlans));
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return e;
}

// One stream per calling thread (the drafter's and the verifier's): a CPU stream is only an
// execution context, and making one per product cost more than a small product.
dnnl::stream& cpu_stream() {
  thread_local dnnl::stream s(cpu_engine());
  return s;
}

// A user scratchpad makes a primitive safe to run on several threads at once.
at::Tensor scratchpad_for(const dnnl::primitive_desc_base& pd) {
  return at::empty({static_cast<int64_t>(pd.scratchpad_desc().get_size())}, at::kByte);
}

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "older than avx2";
  }
}

// bfloat16 products have instructions of their own from AVX-512 BF16 (Cooper Lake, Zen 4) and
// AMX on; elsewhere oneDNN would convert every weight block to float32 first.
bool has_bf16_instructions() {
  const auto isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

// The dtypes oneDNN multiplies here: float32, and bfloat16 where the CPU has instructions for it.
bool supported(at::ScalarType t) { return t == at::kFloat || (t == at::kBFloat16 && has_bf16_instructions()); }

memory::data_type dnnl_type(at::ScalarType t) {
  return t == at::kBFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
}

// A primitive and its description. The scratchpad is the caller's (see scratchpad_for), so one
// primitive may run on several threads at once (the drafter and the verifier).
struct Plan {
  dnnl::matmul prim;
  dnnl::matmul::primitive_desc pd;
};

dnnl::matmul::primitive_desc make_pd(const memory::desc& a, const memory::desc& b, const memory::desc& c) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, cpu_engine());
}

// src [M, in] · weights -> dst [M, out], all plain row-major but the weights.
dnnl::matmul::primitive_desc make_pd(int64_t m, int64_t in, int64_t out, memory::data_type dt,
                                     const memory::desc& weights) {
  return make_pd({{m, in}, dt, memory::format_tag::ab}, weights, {{m, out}, dt, memory::format_tag::ab});
}

// Runs a plan on this thread's stream with a scratchpad of its own, and waits for it.
void run(const Plan& p, const memory::desc& src, void* a, const memory::desc& wts, void* b, const memory::desc& dst,
         void* c) {
  at::Tensor scratch = scratchpad_for(p.pd);
  auto& e = cpu_engine();
  memory ma(src, e, a), mb(wts, e, b), mc(dst, e, c), pad(p.pd.scratchpad_desc(), e, scratch.data_ptr());
  p.prim.execute(cpu_stream(),
                 {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}, {DNNL_ARG_SCRATCHPAD, pad}});
  cpu_stream().wait();
}

// A matmul of M rows against a packed [in, out] weight. Primitives depend only on (M, in, out,
// dtype) and the calling thread's OpenMP thread count, so the layers of a model share them. The
// count is part of the key because a primitive splits its work for the count it was created
// with: one made by a 1-thread actor ran on 1 thread when the initial thread later ran it with 2.
// A server meets a new M at almost every step (the rows of whatever the batch holds), and each
// primitive holds oneDNN's JIT kernels: kept forever, they grew a soak's resident memory with
// every request (issue 49). So the cache keeps the kPlans used last; making one again costs a
// small part of a forward (the figures: docs/performance.md#figures-that-were-in-code-comments).
using PlanKey = std::tuple<int64_t, int64_t, int64_t, int, int>;
LruCache<PlanKey, Plan>& plans() {
  static LruCache<PlanKey, Plan> cache(kPlans);
  return cache;
}

std::shared_ptr<const Plan> plan_for(int64_t m, int64_t in, int64_t out, memory::data_type dt,
                                     const memory::desc& weights) {
  const PlanKey key{m, in, out, static_cast<int>(dt), at::get_num_threads()};
  return plans().get(key, [&] {
    auto pd = make_pd(m, in, out, dt, weights);
    return Plan{dnnl::matmul(pd), pd};
  });
}

}  // namespace

struct PackedWeight::Impl {
  int64_t in = 0, out = 0;
  at::ScalarType dtype = at::kFloat;
  memory::desc desc;
  at::Tensor storage;  // the packed bytes
};

PackedWeight::PackedWeight(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PackedWeight::~PackedWeight() = default;

std::shared_ptr<const PackedWeight> PackedWeight::pack(const at::Tensor& weight) {
  const at::ScalarType t = weight.scalar_type();
  if (!weight.device().is_cpu() || weight.dim() != 2 || !supported(t)) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->out = weight.size(0), impl->in = weight.size(1), impl->dtype = t;
  const memory::data_type dt = dnnl_type(t);
  try {
    // Let oneDNN choose the layout for a single row, the decode case that is bound by reading
    // the weight; every other row count then runs on that same layout.
    memory::desc any({impl->in, impl->out}, dt, memory::format_tag::any);
    impl->desc = make_pd(1, impl->in, impl->out, dt, any).weights_desc();
    impl->storage = at::empty({static_cast<int64_t>(impl->desc.get_size())}, at::kByte);
    at::Tensor w = weight.contiguous();
    memory plain({{impl->in, impl->out}, dt, memory::format_tag::ba}, cpu_engine(), w.data_ptr());
    memory packed(impl->desc, cpu_engine(), impl->storage.data_ptr());
    dnnl::reorder(plain, packed).execute(cpu_stream(), plain, packed);
    cpu_stream().wait();
  } catch (const dnnl::error&) {
    return nullptr;  // no implementation for this shape or CPU: at::linear it is
  }
  return std::shared_ptr<const PackedWeight>(new PackedWeight(std::move(impl)));
}

int64_t PackedWeight::bytes() const { return static_cast<int64_t>(impl_->storage.nbytes()); }

namespace {

// Where index i of dimension d lies in a blocked layout: oneDNN's own rule (memory_desc_wrapper::
// off_v), the part that dimension adds. An element's offset is offset0 plus each dimension's part.
int64_t dim_offset(const dnnl_memory_desc_t& md, int d, int64_t i) {
  const dnnl_blocking_desc_t& blk = md.format_desc.blocking;
  int64_t off = 0, blk_stride = 1;
  for (int b = blk.inner_nblks - 1; b >= 0; --b) {
    if (blk.inner_idxs[b] == d) {
      off += (i % blk.inner_blks[b]) * blk_stride;
      i /= blk.inner_blks[b];
    }
    blk_stride *= blk.inner_blks[b];
  }
  return off + i * blk.strides[d];
}

}  // namespace

at::Tensor PackedWeight::rows(const at::Tensor& ids) const {
  const Impl& w = *impl_;
  const dnnl_memory_desc_t& md = w.desc.data;  // dims {in, out}: a row of the weight is a column here
  TORCH_CHECK(md.format_kind == dnnl_blocked, "PackedWeight::rows: the packed layout is not a blocked one");
  at::Tensor idx = ids.to(at::kLong).contiguous();
  const int64_t n = idx.numel(), elem = static_cast<int64_t>(c10::elementSize(w.dtype));
  std::vector<int64_t> along(w.in);  // each column's part of the offset
  for (int64_t k = 0; k < w.in; ++k) along[k] = dim_offset(md, 0, k);
  at::Tensor out = at::empty({n, w.in}, at::TensorOptions().dtype(w.dtype));
  const auto* src = static_cast<const char*>(w.storage.data_ptr());
  auto* dst = static_cast<char*>(out.data_ptr());
  const int64_t* id = idx.data_ptr<int64_t>();
  for (int64_t r = 0; r < n; ++r) {
    TORCH_CHECK(id[r] >= 0 && id[r] < w.out, "PackedWeight::rows: id ", id[r], " out of range [0, ", w.out, ")");
    const int64_t base = md.offset0 + dim_offset(md, 1, id[r]);
    char* row = dst + r * w.in * elem;
    for (int64_t k = 0; k < w.in; ++k) std::memcpy(row + k * elem, src + (base + along[k]) * elem, elem);
  }
  return out;
}

at::Tensor PackedWeight::multiply(const at::Tensor& x) const {
  const Impl& w = *impl_;
  TORCH_CHECK(x.dim() == 2 && x.size(1) == w.in && x.scalar_type() == w.dtype && x.device().is_cpu(),
              "PackedWeight::multiply: expected a CPU [M, ", w.in, "] input of the weight's dtype");
  const int64_t m = x.size(0);
  at::Tensor a = x.contiguous();
  at::Tensor y = at::empty({m, w.out}, a.options());
  if (m == 0) return y;
  const std::shared_ptr<const Plan> plan = plan_for(m, w.in, w.out, dnnl_type(w.dtype), w.desc);
  const Plan& p = *plan;
  run(p, p.pd.src_desc(), a.data_ptr(), w.desc, w.storage.data_ptr(), p.pd.dst_desc(), y.data_ptr());
  return y;
}

PackedPlanStats packed_plan_stats() {
  const auto s = plans().stats();
  return {static_cast<int64_t>(s.size), static_cast<int64_t>(s.capacity), s.hits, s.misses};
}

std::string packed_matmul_support() {
  const dnnl::version_t* v = dnnl::version();
  std::string s = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                  std::to_string(v->patch) + ", " + isa_name(dnnl::get_effective_cpu_isa());
  return s + (has_bf16_instructions() ? " (float32 and bfloat16)" : " (float32; bfloat16 on at::linear)");
}

}  // namespace exspec

#else  // no oneDNN headers in this build

namespace exspec {

struct PackedWeight::Impl {};
PackedWeight::PackedWeight(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PackedWeight::~PackedWeight() = default;
std::shared_ptr<const PackedWeight> PackedWeight::pack(const at::Tensor&) { return nullptr; }
int64_t PackedWeight::bytes() const { return 0; }
at::Tensor PackedWeight::rows(const at::Tensor&) const {
  throw std::logic_error("PackedWeight::rows in a build without oneDNN");
}
at::Tensor PackedWeight::multiply(const at::Tensor&) const {
  throw std::logic_error("PackedWeight::multiply in a build without oneDNN");
}
PackedPlanStats packed_plan_stats() { return {}; }
std::string packed_matmul_support() { return "not built (no oneDNN headers)"; }

}  // namespace exspec
#endif
