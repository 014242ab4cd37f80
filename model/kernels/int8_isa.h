// The instruction sets of the int8 family's kernels (q8_kernel.h's Q8_0 products and
// kquant_kernel.h's K-quant ones): what this CPU runs, and the cap EXSPEC_INT8_ISA=plain|avx2
// puts on the path chosen (benchmarks of the slower paths; it never raises it). One reading of
// the CPU's features and of the variable for both.
#pragma once
#include <vector>

namespace exspec::int8_isa {

enum class Isa { Plain, Avx2, Avx512Vnni };  // Avx2: with FMA and F16C

// Avx512Vnni needs AVX-512 F, BW and VNNI besides AVX2, and VL where `vl` (a kernel that uses
// EVEX-encoded 256-bit registers).
Isa best(bool vl);              // the fastest this CPU runs, under the cap
std::vector<Isa> here(bool vl);  // every one this CPU runs, plain first (no cap: the tests')
const char* name(Isa isa);

}  // namespace exspec::int8_isa

// What the functions of the family's Avx512Vnni paths are compiled for: one target for them all.
#define EXSPEC_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
