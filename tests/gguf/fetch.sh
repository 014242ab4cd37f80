#!/bin/sh
# @huggingface/gguf, the independent GGUF reader that tests/test_gguf_model.cpp holds ours
# against (read_gguf.mjs); version pinned.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../scripts/npm-fetch" "$here" node_modules/@huggingface/gguf/dist/index.mjs
