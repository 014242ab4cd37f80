#include "model/kernels/isa.h"

#include <cstdlib>
#include <stdexcept>

namespace exspec::isa {
namespace {

bool has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

bool has_avx512(Family f) {
  if (!has_avx2() || !__builtin_cpu_supports("avx512f")) return false;
  const bool bw = __builtin_cpu_supports("avx512bw"), vl = __builtin_cpu_supports("avx512vl");
  switch (f) {
    case Family::F32: return true;
    case Family::Bf16: return bw && vl && __builtin_cpu_supports("avx512bf16");
    case Family::Int8: return bw && __builtin_cpu_supports("avx512vnni");
    case Family::Int8Vl: return bw && vl && __builtin_cpu_supports("avx512vnni");
  }
  throw std::invalid_argument("isa: unknown kernel family");
}

Isa read_cap() {
  const char* v = std::getenv("EXSPEC_ISA");
  if (!v || !*v) return Isa::Avx512;
  const std::string s = v;
  if (s == "avx512") return Isa::Avx512;
  if (s == "avx2") return Isa::Avx2;
  if (s == "plain") return Isa::Plain;
  throw std::invalid_argument("EXSPEC_ISA='" + s + "': expected avx512, avx2 or plain");
}

Isa top(Family f) { return has_avx512(f) ? Isa::Avx512 : has_avx2() ? Isa::Avx2 : Isa::Plain; }

}  // namespace

Isa cap() {
  static const Isa c = read_cap();
  return c;
}

Isa best(Family f) {
  const Isa t = top(f), c = cap();
  return static_cast<int>(t) < static_cast<int>(c) ? t : c;
}

std::vector<Isa> here(Family f) {
  std::vector<Isa> v{Isa::Plain};
  if (has_avx2()) v.push_back(Isa::Avx2);
  if (has_avx512(f)) v.push_back(Isa::Avx512);
  return v;
}

const char* name(Isa isa, Family f) {
  switch (isa) {
    case Isa::Plain: return "plain";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: break;
  }
  switch (f) {
    case Family::F32: return "avx512";
    case Family::Bf16: return "avx512_bf16";
    case Family::Int8:
    case Family::Int8Vl: return "avx512_vnni";
  }
  throw std::invalid_argument("isa: unknown kernel family");
}

std::string describe() {
  std::string s = std::string("float32 ") + name(best(Family::F32), Family::F32) + ", bfloat16 " +
                  name(best(Family::Bf16), Family::Bf16) + ", int8 " + name(best(Family::Int8), Family::Int8) +
                  ", K-quant " + name(best(Family::Int8Vl), Family::Int8Vl);
  if (std::getenv("EXSPEC_ISA") && *std::getenv("EXSPEC_ISA")) s += std::string(" (EXSPEC_ISA=") + std::getenv("EXSPEC_ISA") + ")";
  return s;
}

void cap_libraries() {
  switch (cap()) {
    case Isa::Avx512: return;
    case Isa::Avx2: ::setenv("ATEN_CPU_CAPABILITY", "avx2", /*overwrite=*/0); return;
    case Isa::Plain: ::setenv("ATEN_CPU_CAPABILITY", "default", 0); return;
  }
}

}  // namespace exspec::isa
