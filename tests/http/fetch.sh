#!/bin/sh
# Installs the npm package pinned in package.json / package-lock.json into
# tests/http/node_modules: the official OpenAI Node client (openai@6), which
# openai_client.mjs runs against a real `exspec serve` in the http tests.
# Idempotent: does nothing when it is already there.
set -eu
cd "$(dirname "$0")"
need="node_modules/openai/package.json"
missing=0
for f in $need; do [ -f "$f" ] || missing=1; done
if [ "$missing" = 0 ] && [ -f node_modules/.package-lock.json ] && \
   [ ! package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "tests/http: node_modules up to date"
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
echo "tests/http: node_modules ready"
