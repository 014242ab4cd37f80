#!/bin/sh
# The official OpenAI Node client (openai@6, pinned), which openai_client.mjs and
# openai_batches.mjs run against a real `exspec serve` in the http tests.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../scripts/npm-fetch" "$here" node_modules/openai/package.json
