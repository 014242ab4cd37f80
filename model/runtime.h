// Process-wide tensor runtime settings: thread pools, BLAS check, dtype/device names.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

namespace exspec {

// Sizes the two thread pools a forward pass uses: torch's intra-op (OpenMP) pool and OpenBLAS's
// own pthread pool (0 = number of cores). Both are set explicitly: torch reports 1 thread on
// small machines, and OpenMP workers that spin while OpenBLAS works steal its cores (measured on
// 2 cores: docs/performance.md#figures-that-were-in-code-comments).
void configure_threads(int torch_threads, int blas_threads);
// OpenMP's thread count is per-thread state: threads other than the one that called
// configure_threads (actors' threads) must call this before their first tensor op. Cheap after
// the first call on a thread.
void apply_thread_settings();
// Gives the calling thread alone `threads` threads (kernel_threads.h's use_threads: its kernels',
// and OpenMP's, which is 1 beside the spin team). Torch sets a thread's OpenMP count to its
// default at the thread's first parallel operation; that happens here first, so it cannot undo
// this count later.
void set_thread_count(int threads);

// The BLAS library libtorch calls, as a resolved path ("" when none could be found).
std::string blas_library();
// Prints a loud warning to stderr when libtorch is not on OpenBLAS (or MKL). Returns true when fine.
bool check_blas();

// float64 | float32 | bfloat16 | float16 | int8 (at::kChar: int8 weights, float32 activations)
at::ScalarType parse_dtype(const std::string& name);
const char* dtype_name(at::ScalarType t);
at::Device parse_device(const std::string& name);     // cpu | cuda | cuda:N
bool parse_longrope(const std::string& name);        // short | long: LoadOptions::long_context

}  // namespace exspec
