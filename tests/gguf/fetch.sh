#!/bin/sh
# @huggingface/gguf, the independent GGUF reader that tests/test_gguf_model.cpp holds ours
# against (read_gguf.mjs), and llama.cpp itself through node-llama-cpp's prebuilt CPU binary
# (llama_cpp/, for llama_cpp_agree.sh; llama_cpp/.npmrc leaves out the GPU builds); versions pinned.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
"$here/../../scripts/npm-fetch" "$here" node_modules/@huggingface/gguf/dist/index.mjs
"$here/../../scripts/npm-fetch" "$here/llama_cpp" node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/llama-addon.node
# llama.cpp v0.5.0's source (its gguf-py: the reference for the weight-type table's values).
"$here/../../scripts/llama-cpp-source"
