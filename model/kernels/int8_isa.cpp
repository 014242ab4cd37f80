#include "model/kernels/int8_isa.h"

#include <cstdlib>
#include <string>

namespace exspec::int8_isa {
namespace {

bool has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

bool has_vnni(bool vl) {
  return has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vnni") && (!vl || __builtin_cpu_supports("avx512vl"));
}

}  // namespace

Isa best(bool vl) {
  const Isa top = has_vnni(vl) ? Isa::Avx512Vnni : has_avx2() ? Isa::Avx2 : Isa::Plain;
  const char* cap = std::getenv("EXSPEC_INT8_ISA");
  if (!cap) return top;
  const std::string c = cap;
  if (c == "plain") return Isa::Plain;
  if (c == "avx2" && top != Isa::Plain) return Isa::Avx2;
  return top;
}

std::vector<Isa> here(bool vl) {
  std::vector<Isa> v{Isa::Plain};
  if (has_avx2()) v.push_back(Isa::Avx2);
  if (has_vnni(vl)) v.push_back(Isa::Avx512Vnni);
  return v;
}

const char* name(Isa isa) {
  switch (isa) {
    case Isa::Avx512Vnni: return "avx512_vnni";
    case Isa::Avx2: return "avx2";
    default: return "plain";
  }
}

}  // namespace exspec::int8_isa
