#!/usr/bin/env bash
# ggml's products at M = 1..16 rows for each GGML type, beside build/kernel_rows (issue 70):
# bench/ggml_rows.cpp compiled against llama.cpp v0.5.0's libraries (bench/llama_cpp_build.sh
# BUILD first) and run. BUILD: native, or avx2 (then run kernel_rows with EXSPEC_ISA=avx2).
# usage: bench/ggml_rows.sh [native|avx2] TYPE[,TYPE...] [threads 2] [rounds 7] [max rows 16]
#   e.g. bench/ggml_rows.sh avx2 q4_0,iq4_nl,q8_0 2 7 16
set -euo pipefail
isa=${1:?usage: bench/ggml_rows.sh native|avx2 TYPES [threads] [rounds] [max rows]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/third_party/llama.cpp-v0.5.0/llama.cpp
lib=$root/third_party/llama.cpp-v0.5.0/build-$isa/bin
[ -f "$lib/libggml.so" ] || { echo "ggml_rows: no $lib/libggml.so: run bench/llama_cpp_build.sh $isa first" >&2; exit 1; }
exe=$root/third_party/llama.cpp-v0.5.0/ggml_rows-$isa
if [ ! -x "$exe" ] || [ "$root/bench/ggml_rows.cpp" -nt "$exe" ]; then
  g++ -O2 -std=c++17 -I"$src/ggml/include" "$root/bench/ggml_rows.cpp" -L"$lib" -lggml -lggml-base -lggml-cpu \
    -Wl,-rpath,"$lib" -o "$exe"
fi
"$exe" "$@"
