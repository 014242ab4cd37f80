#include "model/runtime.h"

#include "model/kernels/kernel_threads.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <thread>

namespace exspec {

namespace {
std::atomic<int> g_torch_threads{0};
}

void apply_thread_settings() {
  thread_local int applied = -1;
  const int n = g_torch_threads.load();
  if (n > 0 && applied != n) {
    at::set_num_threads(n);  // torch's default for threads yet to start, and its other pools
    set_thread_count(n);     // then this thread's own counts
    applied = n;
  }
}

void set_thread_count(int threads) {
  at::get_num_threads();  // torch's first-use setting of this thread's count, before ours
  use_threads(threads);
}

void configure_threads(int torch_threads, int blas_threads) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  g_torch_threads = torch_threads > 0 ? torch_threads : cores;
  apply_thread_settings();
  using set_fn = void (*)(int);
  if (auto f = reinterpret_cast<set_fn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    f(blas_threads > 0 ? blas_threads : cores);
}

std::string blas_library() {
  std::string found;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        auto* out = static_cast<std::string*>(data);
        if (name.find("libblas.so") != std::string::npos || name.find("libopenblas") != std::string::npos ||
            name.find("libmkl") != std::string::npos) {
          char real[PATH_MAX];
          std::string resolved = realpath(name.c_str(), real) ? std::string(real) : name;
          if (out->empty() || resolved.find("libblas.so") != std::string::npos) *out = resolved;
        }
        return 0;
      },
      &found);
  return found;
}

bool check_blas() {
  const std::string lib = blas_library();
  if (lib.find("libblas.so") == std::string::npos && lib.find("mkl") != std::string::npos) return true;
  // Debian's libblas.so.3 is an alternative: OpenBLAS lives under .../openblas-pthread/.
  if (lib.find("openblas") != std::string::npos) return true;
  if (lib.empty() && at::globalContext().hasMKL()) return true;  // PyTorch's own builds use MKL
  std::cerr << "\n*** WARNING: libtorch is running on the reference BLAS (" << (lib.empty() ? "unknown" : lib)
            << ").\n*** It is 10-50x slower and hides every batching effect. Install OpenBLAS:\n"
            << "***   apt-get install libopenblas0-pthread   (or run scripts/setup)\n\n";
  return false;
}

at::ScalarType parse_dtype(const std::string& n) {
  if (n == "float64" || n == "f64" || n == "double") return at::kDouble;
  if (n == "float32" || n == "f32" || n == "float") return at::kFloat;
  if (n == "bfloat16" || n == "bf16") return at::kBFloat16;
  if (n == "float16" || n == "f16" || n == "half") return at::kHalf;
  if (n == "int8" || n == "q8_0") return at::kChar;  // int8 weights, float32 activations (LoadOptions)
  throw std::invalid_argument("unknown dtype \"" + n + "\" (float64, float32, bfloat16, float16, int8)");
}

const char* dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kDouble: return "float64";
    case at::kFloat: return "float32";
    case at::kBFloat16: return "bfloat16";
    case at::kHalf: return "float16";
    case at::kChar: return "int8";
    default: return "?";
  }
}

bool parse_longrope(const std::string& n) {
  if (n != "short" && n != "long") throw std::invalid_argument("unknown longrope \"" + n + "\" (short, long)");
  return n == "long";
}

at::Device parse_device(const std::string& n) {
  try {
    at::Device d(n);
    if (d.is_cuda() && !at::hasCUDA())
      throw std::invalid_argument("device \"" + n + "\" requested but this libtorch has no CUDA");
    return d;
  } catch (const c10::Error&) {
    throw std::invalid_argument("unknown device \"" + n + "\" (cpu, cuda, cuda:N)");
  }
}

}  // namespace exspec
