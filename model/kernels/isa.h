// The instruction sets every CPU kernel family is written for, and the one cap on them all
// (torch-free). A family (float32, bfloat16, int8 products; K-quant and 4-bit screen products)
// has a plain C++ path, an AVX2+FMA path and an AVX-512 path, all with one fixed order of sums,
// so a result never depends on the path; which one runs is a matter of speed.
//
//   EXSPEC_ISA=avx512|avx2|plain   the highest level any kernel may use (unset: avx512, no cap).
//
// A cap never raises a family above what this CPU runs. The tests run the batch-invariance and
// oracle tests once more under each cap (tests/CMakeLists.txt), so a CI run on an AVX-512 machine
// also proves the AVX2 and plain paths.
#pragma once
#include <string>
#include <vector>

namespace exspec::isa {

enum class Isa { Plain, Avx2, Avx512 };  // Avx2: with FMA and F16C

// What a family's AVX-512 path needs besides AVX-512 F and AVX2: its AVX2 path needs AVX2, FMA
// and F16C alone.
enum class Family {
  F32,     // AVX-512 F
  Bf16,    // AVX-512 BF16 (vdpbf16ps) with BW and VL
  Int8,    // AVX-512 BW and VNNI (zmm registers only)
  Int8Vl,  // AVX-512 BW, VNNI and VL (EVEX-encoded ymm registers too)
};

// The cap: EXSPEC_ISA, read once. Throws std::invalid_argument naming the value when it is not
// one of avx512, avx2, plain; the executable reads it first thing, so a typo stops it there.
Isa cap();
Isa best(Family f);              // the highest level this CPU runs for f, under the cap
std::vector<Isa> here(Family f);  // every level this CPU runs for f, plain first (no cap: the tests')
const char* name(Isa isa, Family f);  // e.g. "avx512_vnni" for Int8's Avx512, "avx2", "plain"
// One line for logs and `exspec check`: each family's path, and the cap when one is set.
std::string describe();

// Under a cap, libtorch's own dispatch capped alike (ATEN_CPU_CAPABILITY, unless set already), so
// that what the process leaves to libtorch takes that level's kernels too. oneDNN is left alone:
// nothing served runs on it, and libtorch, which checks the real CPU, hands it bfloat16 products
// that a capped oneDNN refuses. Call before the first tensor operation (the executable's and the
// tests' start). Reads the cap: throws as cap().
void cap_libraries();

}  // namespace exspec::isa

// What the functions of the int8 family's AVX-512 paths are compiled for: one target for them all.
#define EXSPEC_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
