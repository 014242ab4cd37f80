#!/usr/bin/env bash
# The CUDA-only sources (model/cuda_graphs.cpp, and model/step_runner.cpp as the CUDA build
# compiles it) compile-checked against the GPU machine's own PyTorch 2.11 / CUDA 13 headers, with
# no GPU: ../shared/gpu-headers/syntax-check beside the checkout (CI keeps a copy of shared/ there).
#   tests/gpu_syntax_check.sh SOURCE_DIR
# Exits 77 (CTest's SKIP_RETURN_CODE), saying why, where those headers are absent.
set -euo pipefail
src=$(cd "${1:-.}" && pwd)
check="${EXSPEC_GPU_HEADERS:-$src/../shared/gpu-headers}/syntax-check"
if [ ! -x "$check" ]; then
  echo "SKIP: no $check (the GPU machine's headers: a copy of shared/gpu-headers beside the checkout)"
  exit 77
fi
cd "$src"
files=(model/cuda_graphs.cpp model/step_runner.cpp model/device_timeline_cuda.cpp model/device_timeline.cpp)
echo "syntax-check -DEXSPEC_WITH_CUDA ${files[*]}"
# The headers' own warnings (std::hardware_destructive_interference_size) are not ours.
"$check" -DEXSPEC_WITH_CUDA -Wno-interference-size "${files[@]}"
echo "ok: ${files[*]} compile against the GPU machine's headers"
