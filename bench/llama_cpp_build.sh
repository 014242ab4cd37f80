#!/usr/bin/env bash
# Builds llama.cpp v0.5.0 (the peer the benchmarks measure against) from the source npm's
# node-llama-cpp@3.22.1 ships (scripts/llama-cpp-source): llama-server, llama-quantize and
# llama-bench, CPU only, into third_party/llama.cpp-v0.5.0/build-ISA/bin. ISA: native (every
# instruction set this CPU has, the default) or avx2 (AVX2 + FMA, no AVX-512: what an AVX2-only
# CPU runs, for measuring under EXSPEC_ISA=avx2 on any machine). About 15 minutes on 2 cores.
# usage: bench/llama_cpp_build.sh [native|avx2]
set -euo pipefail
isa=${1:-native}
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/llama-cpp-source"
src=$root/third_party/llama.cpp-v0.5.0/llama.cpp
build=$root/third_party/llama.cpp-v0.5.0/build-$isa
case $isa in
  native) flags=(-DGGML_NATIVE=ON) ;;
  avx2) flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF) ;;
  *) echo "usage: bench/llama_cpp_build.sh [native|avx2]" >&2; exit 2 ;;
esac
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF "${flags[@]}" > "$build.log" 2>&1 || { tail -30 "$build.log"; exit 1; }
cmake --build "$build" -j "${EXSPEC_JOBS:-$(nproc)}" --target llama-server llama-quantize llama-bench >> "$build.log" 2>&1 ||
  { tail -30 "$build.log"; exit 1; }
echo "llama.cpp v0.5.0 ($isa): $build/bin"
